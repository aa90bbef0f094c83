"""appsdk: the command-line toolkit for building apps for ChatGPT in Python."""

__version__ = "0.1.0"
