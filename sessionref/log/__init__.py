"""The DSH session log format: records and lines, directory names, stores, and the writer.

Import what you need from its modules (``sessionref.log.writer``, ``sessionref.log.builder``,
``sessionref.log.store``, …): the package itself imports none of them, so reading a log never
pays for the writer's imports.
"""
