from aintern.cli import app

app()
