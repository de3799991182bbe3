"""The author's previews: `make serve` (one language, reloading on every edit) and `make preview` (the built site).

    .venv/bin/python scripts/serve.py --language zh --port 8001   # make serve LANG_=zh PORT=8001
    .venv/bin/python scripts/serve.py --site site --port 8000     # make preview PORT=8000

Both serve on 127.0.0.1. A port that is taken (another preview running, in another language, say)
is one sentence that names the fix, `make serve PORT=<another>`, before anything starts.
"""

import argparse
import errno
import os
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from build_site import LANGUAGES  # noqa: E402

HOST = "127.0.0.1"


def port_problem(port, target):
    """Why the preview cannot listen on the port, as a sentence with the fix ("" when it can)."""
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError as error:
            taken = error.errno == errno.EADDRINUSE
            why = "is taken (another preview may be running there)" if taken else f"cannot be used ({error.strerror})"
            return f"port {port} on {HOST} {why}: run `make {target} PORT={port + 1}`, or any free port"
    return ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--language", default="en", help="the language make serve previews (LANG_)")
    parser.add_argument("--site", type=Path, help="serve this built site instead (make preview)")
    parser.add_argument("--port", default="8000", help="the port on 127.0.0.1 (PORT)")
    args = parser.parse_args(argv)
    target = "preview" if args.site else "serve"
    if not args.port.isdigit() or not 0 < int(args.port) < 65536:
        sys.exit(f"PORT={args.port} is not a port: run `make {target} PORT=8001`, a number below 65536")
    if args.language not in LANGUAGES:
        sys.exit(f"LANG_={args.language} is not a language of the site: run `make serve LANG_=<{'|'.join(LANGUAGES)}>`")
    port = int(args.port)
    problem = port_problem(port, target)
    if problem:
        sys.exit(problem)
    if args.site:
        command = [sys.executable, "-m", "http.server", "--directory", str(args.site), "--bind", HOST, str(port)]
    else:
        command = [sys.executable, "-m", "mkdocs", "serve", "--config-file", LANGUAGES[args.language],
                   "--dev-addr", f"{HOST}:{port}"]
    os.chdir(ROOT)
    os.environ["NO_MKDOCS_2_WARNING"] = "1"
    os.execv(sys.executable, command)  # the server itself, in this process: Ctrl-C stops it


if __name__ == "__main__":
    main()
