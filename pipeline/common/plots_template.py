"""An offline HTML template for ``dvc plots show``.

DVC's default page loads vega, vega-lite and vega-embed from a CDN, which a machine without internet
cannot reach: the plots render blank. This writes a template with the three libraries inlined (fetched
once with ``npm pack`` from the npm registry into ``.plots-vendor/``) and points the repository's local
DVC config at it, so ``dvc plots show`` and ``dvc plots diff`` open offline. ``dvc plots show --json``
needs neither.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipeline.common.bounded_tar import open_bounded

MAX_PACKAGE_BYTES = 256 * 2**20  # an npm package of one library, decompressed (vega's is about 10 MiB)
VENDOR = Path(".plots-vendor")
TEMPLATE = VENDOR / "offline_template.html"
PACKAGES = {"vega": ("5.33.1", "vega.min.js"), "vega-lite": ("5.23.0", "vega-lite.min.js"),
            "vega-embed": ("6.29.0", "vega-embed.min.js")}


def _script(name: str, version: str, filename: str) -> str:
    tgz = VENDOR / f"{name}-{version}.tgz"
    if not tgz.exists():
        subprocess.run(["npm", "pack", f"{name}@{version}", "--silent", "--pack-destination", str(VENDOR)],
                       check=True, capture_output=True)
    with open_bounded(tgz, "gz", MAX_PACKAGE_BYTES) as tar:
        member = tar.extractfile(f"package/build/{filename}")
        if member is None:
            raise FileNotFoundError(f"{filename} not in {tgz}")
        return member.read().decode("utf-8").replace("</script>", "<\\/script>")


def write_template() -> Path:
    VENDOR.mkdir(exist_ok=True)
    scripts = "\n".join(f'<script type="text/javascript">{_script(n, v, f)}</script>' for n, (v, f) in PACKAGES.items())
    TEMPLATE.write_text(
        "<!DOCTYPE html>\n<html>\n<head>\n{refresh_tag}\n<title>qa-pipeline plots</title>\n" + scripts
        + "\n<style>table { border-spacing: 15px; }</style>\n</head>\n<body>\n{plot_divs}\n</body>\n</html>\n",
        encoding="utf-8",
    )
    subprocess.run([str(Path(sys.executable).with_name("dvc")), "config", "--local", "plots.html_template",
                    str(TEMPLATE.resolve())], check=True)
    return TEMPLATE


if __name__ == "__main__":
    print(f"wrote {write_template()}; `dvc plots show` now renders offline")
