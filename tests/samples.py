"""One small real program per language, and the symbols the chunker must find in it."""

SAMPLES: dict[str, tuple[str, str, dict[str, tuple[str, str | None]]]] = {
    # language: (file name, source, {symbol: (symbol type, parent)})
    "python": (
        "app.py",
        '''import os

LIMIT = 10


class Store:
    """Keeps rows."""

    def __init__(self, path):
        self.path = path

    @property
    def size(self):
        return os.path.getsize(self.path)


def connect(url):
    return Store(url)
''',
        {
            "Store": ("class", None),
            "__init__": ("method", "Store"),
            "size": ("method", "Store"),
            "connect": ("function", None),
        },
    ),
    "javascript": (
        "app.js",
        """const express = require("express");

class Router {
  constructor(opts) { this.opts = opts; }
  route(path) { return path; }
}

function createApp() { return new Router({}); }

const handler = (req, res) => { res.send("ok"); };
module.exports = { createApp, handler };
""",
        {
            "Router": ("class", None),
            "route": ("method", "Router"),
            "createApp": ("function", None),
            "handler": ("function", None),
        },
    ),
    "typescript": (
        "app.ts",
        """import { z } from "zod";

export interface Options { timeout: number }

export enum Mode { Fast, Slow }

export class Client {
  constructor(private opts: Options) {}
  fetchData(url: string): Promise<string> { return fetch(url).then(r => r.text()); }
}

export function makeClient(opts: Options): Client { return new Client(opts); }
""",
        {
            "Options": ("interface", None),
            "Mode": ("enum", None),
            "Client": ("class", None),
            "fetchData": ("method", "Client"),
            "makeClient": ("function", None),
        },
    ),
    "tsx": (
        "view.tsx",
        """import React from "react";

export function Button(props: { label: string }) {
  return <button>{props.label}</button>;
}

export const Panel = () => <div className="panel"><Button label="ok" /></div>;
""",
        {"Button": ("function", None), "Panel": ("function", None)},
    ),
    "go": (
        "server.go",
        """package main

import "net/http"

type Server struct {
	Addr string
}

type Handler interface {
	Serve(w http.ResponseWriter)
}

func (s *Server) Start() error {
	return http.ListenAndServe(s.Addr, nil)
}

func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}
""",
        {
            "Server": ("struct", None),
            "Handler": ("interface", None),
            "Start": ("method", None),
            "NewServer": ("function", None),
        },
    ),
    "rust": (
        "lib.rs",
        """use std::fmt;

pub struct Point { x: i32, y: i32 }

pub trait Shape { fn area(&self) -> f64; }

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub fn distance(a: &Point, b: &Point) -> f64 {
    (((a.x - b.x).pow(2) + (a.y - b.y).pow(2)) as f64).sqrt()
}
""",
        {"Point": ("struct", None), "Shape": ("interface", None), "distance": ("function", None)},
    ),
    "java": (
        "Cache.java",
        """package com.example;

import java.util.Map;

public class Cache {
    private final Map<String, String> items;

    public Cache(Map<String, String> items) {
        this.items = items;
    }

    public String get(String key) {
        return items.get(key);
    }
}
""",
        {"Cache": ("class", None), "get": ("method", "Cache")},
    ),
    "csharp": (
        "Repo.cs",
        """using System;

namespace Demo.Data
{
    public interface IRepository { void Save(); }

    public class Repository : IRepository
    {
        public Repository(string connection) { Connection = connection; }
        public string Connection { get; }
        public void Save() { Console.WriteLine(Connection); }
    }
}
""",
        {
            "Demo.Data": ("namespace", None),
            "IRepository": ("interface", "Demo.Data"),
            "Repository": ("class", "Demo.Data"),
        },
    ),
    "c": (
        "buf.c",
        """#include <stdlib.h>

struct buffer {
    char *data;
    size_t len;
};

static int buffer_grow(struct buffer *b, size_t n) {
    b->data = realloc(b->data, b->len + n);
    return b->data != NULL;
}

int main(void) { return 0; }
""",
        {"buffer": ("struct", None), "buffer_grow": ("function", None), "main": ("function", None)},
    ),
    "cpp": (
        "vec.hpp",
        """#include <vector>

namespace geo {

class Vec {
public:
    double norm() const;
private:
    double x_, y_;
};

double dot(const Vec& a, const Vec& b) { return 0.0; }

}  // namespace geo
""",
        {"geo": ("namespace", None), "Vec": ("class", "geo"), "dot": ("method", "geo")},
    ),
    "ruby": (
        "user.rb",
        """require "json"

module Accounts
  class User
    def initialize(name)
      @name = name
    end

    def to_json(*args)
      { name: @name }.to_json(*args)
    end
  end
end
""",
        {"Accounts": ("namespace", None), "User": ("class", "Accounts")},
    ),
    "php": (
        "Logger.php",
        """<?php

namespace App\\Log;

interface Handler { public function handle(array $record): void; }

class Logger
{
    public function __construct(private Handler $handler) {}

    public function info(string $msg): void { $this->handler->handle(['msg' => $msg]); }
}

function helper() { return 1; }
""",
        {"Handler": ("interface", None), "Logger": ("class", None), "helper": ("function", None)},
    ),
    "kotlin": (
        "Client.kt",
        """package io.demo

import kotlinx.coroutines.delay

class HttpClient(val engine: String) {
    fun get(url: String): String = engine + url
}

object Defaults { val timeout = 30 }

fun retry(times: Int, block: () -> Unit) { repeat(times) { block() } }
""",
        {"HttpClient": ("class", None), "Defaults": ("class", None), "retry": ("function", None)},
    ),
    "swift": (
        "Session.swift",
        """import Foundation

protocol RequestAdapter { func adapt(_ r: URLRequest) -> URLRequest }

open class Session {
    let queue: DispatchQueue
    init(queue: DispatchQueue) { self.queue = queue }
    func request(_ url: String) -> String { return url }
}

func makeSession() -> Session { Session(queue: .main) }
""",
        {"RequestAdapter": ("interface", None), "Session": ("class", None), "makeSession": ("function", None)},
    ),
    "scala": (
        "Functor.scala",
        """package cats

trait Functor[F[_]] {
  def map[A, B](fa: F[A])(f: A => B): F[B]
}

object Functor {
  def apply[F[_]](implicit F: Functor[F]): Functor[F] = F
}

class Box[A](val value: A)
""",
        {"Functor": ("interface", None), "Box": ("class", None)},
    ),
    "lua": (
        "util.lua",
        """local M = {}

local function trim(s)
  return (s:gsub("^%s+", ""))
end

function M.split(s, sep)
  local out = {}
  for piece in s:gmatch("[^" .. sep .. "]+") do table.insert(out, trim(piece)) end
  return out
end

return M
""",
        {"trim": ("function", None), "split": ("function", None)},
    ),
    "bash": (
        "run.sh",
        """#!/usr/bin/env bash
set -euo pipefail

log() {
  echo "[$(date)] $*" >&2
}

run_tests() {
  log "running"
  pytest -q
}

run_tests "$@"
""",
        {"log": ("function", None), "run_tests": ("function", None)},
    ),
    "elixir": (
        "conn.ex",
        """defmodule Plug.Conn do
  @moduledoc "The connection."

  defstruct host: "www.example.com", status: nil

  def put_status(conn, status) do
    %{conn | status: status}
  end

  defp private_helper(x), do: x
end
""",
        {"Plug.Conn": ("class", None), "put_status": ("method", "Plug.Conn")},
    ),
    "haskell": (
        "Core.hs",
        """module XMonad.Core where

import Data.Maybe (fromMaybe)

data WindowSet = WindowSet { current :: Int }

class Layout l where
  doLayout :: l -> Int

runX :: Int -> IO ()
runX n = print n
""",
        {"WindowSet": ("struct", None), "Layout": ("interface", None), "runX": ("function", None)},
    ),
    "zig": (
        "parse.zig",
        """const std = @import("std");

pub const Param = struct {
    name: []const u8,
};

pub fn parse(allocator: std.mem.Allocator, args: []const []const u8) !void {
    _ = allocator;
    _ = args;
}
""",
        {"parse": ("function", None)},
    ),
}
