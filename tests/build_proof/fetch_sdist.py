#!/usr/bin/env python3
"""fetch_sdist.py PROJECT VERSION CACHE_DIR: prints the directory of PROJECT's
source distribution VERSION, unpacked under CACHE_DIR (fetched once).
fetch_sdist.py --index: prints the index URL pip uses.

The index is the one pip uses (PIP_INDEX_URL, pip's configuration, else
pip's default), read from pip itself: no registry host is named here. The
file is found through the index's simple API (PEP 503) and checked against
the sha256 the index gives. `pip download` cannot fetch an sdist whose
setup.py imports torch (it builds metadata first), hence this.
Exit 77 (ctest SKIP) when pip or the index cannot be reached."""
import hashlib
import html.parser
import os
import ssl
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request


def skip(why):
    print(f"fetch_sdist.py: SKIP: {why}", file=sys.stderr)
    sys.exit(77)


def pip_index_url():
    url = os.environ.get("PIP_INDEX_URL")
    if url:
        return url
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                             capture_output=True, text=True, timeout=60)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
        from pip._internal.models.index import PyPI  # pip's own default
        return PyPI.simple_url
    except Exception as e:  # no pip at all
        skip(f"cannot ask pip for its index: {e}")


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)


def main():
    if sys.argv[1:] == ["--index"]:
        print(pip_index_url())
        return
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    project, version, cache = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    normalized = project.lower().replace("_", "-").replace(".", "-")
    filename = f"{normalized.replace('-', '_')}-{version}.tar.gz"
    unpacked = os.path.join(cache, filename[: -len(".tar.gz")])
    if os.path.isdir(unpacked):
        print(unpacked)
        return
    os.makedirs(cache, exist_ok=True)
    context = ssl.create_default_context(cafile=os.environ.get("PIP_CERT") or None)
    page_url = pip_index_url().rstrip("/") + f"/{normalized}/"
    try:
        with urllib.request.urlopen(page_url, timeout=60, context=context) as page:
            parser = Links()
            parser.feed(page.read().decode("utf-8", "replace"))
    except Exception as e:
        skip(f"the index did not answer for {project}: {e}")
    for href in parser.links:
        url, _, fragment = href.partition("#")
        if os.path.basename(urllib.parse.urlparse(url).path) != filename:
            continue
        target = os.path.join(cache, filename)
        try:
            with urllib.request.urlopen(urllib.parse.urljoin(page_url, url), timeout=300, context=context) as r, \
                    open(target + ".part", "wb") as out:
                out.write(r.read())
        except Exception as e:
            skip(f"downloading {filename}: {e}")
        if fragment.startswith("sha256="):
            with open(target + ".part", "rb") as f:
                if hashlib.sha256(f.read()).hexdigest() != fragment[len("sha256="):]:
                    print(f"fetch_sdist.py: {filename}: sha256 differs from the index's", file=sys.stderr)
                    sys.exit(1)
        os.replace(target + ".part", target)
        with tarfile.open(target) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(cache, filter="data")
            else:  # a Python without extraction filters: refuse what would leave the cache
                for member in tar.getmembers():
                    path = os.path.realpath(os.path.join(cache, member.name))
                    if not path.startswith(cache + os.sep) or member.issym() or member.islnk():
                        print(f"fetch_sdist.py: {filename}: unsafe member {member.name}", file=sys.stderr)
                        sys.exit(1)
                tar.extractall(cache)
        print(unpacked)
        return
    skip(f"the index has no {filename}")


main()
