"""The snapshot stages, one small pure function per module.

:mod:`sessionref.snapshot` composes them.
"""
