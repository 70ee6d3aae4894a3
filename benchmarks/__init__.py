"""Benchmarks for sessionref: store generator and the JavaScript reference runner."""
