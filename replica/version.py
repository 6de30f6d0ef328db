"""The package version, in the bottom layer so that any module can name it (sweep cache keys,
``replica --version``)."""

__version__ = "0.1.0"
