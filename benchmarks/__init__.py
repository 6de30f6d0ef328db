"""Speed and accuracy benchmarks. ``python -m benchmarks`` (or ``make bench``) runs every module
listed in :data:`benchmarks.__main__.MODULES` and rewrites its section of ``benchmarks/README.md``
(between ``<!-- BEGIN name -->`` and ``<!-- END name -->``)."""
