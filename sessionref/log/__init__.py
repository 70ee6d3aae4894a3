"""The DSH session log format: records and lines, directory names, stores, and the writer."""

from sessionref.log.builder import LogBuilder, text_block
from sessionref.log.writer import (
    SessionWriter,
    chunk_row,
    log_path,
    pack_chunks,
    render_batch,
    render_header,
    render_log,
    write_log,
    zstd_frame,
)

__all__ = [
    "LogBuilder",
    "SessionWriter",
    "chunk_row",
    "log_path",
    "pack_chunks",
    "render_batch",
    "render_header",
    "render_log",
    "text_block",
    "write_log",
    "zstd_frame",
]
