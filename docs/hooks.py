"""MkDocs hook: the footer names the version of srctrans the site documents."""

import pathlib
import re


def on_config(config):
    init = pathlib.Path(config["docs_dir"]).parent / "srctrans" / "__init__.py"
    version = re.search(r'__version__ = "([^"]+)"', init.read_text()).group(1)
    config["copyright"] = f"srctrans {version}"
    config["extra"]["version_label"] = version
    return config
