"""A real PostgreSQL server for tests: Debian's `postgresql` package, `initdb` + `pg_ctl` in a temp dir.

The server runs as the `postgres` user when the tests run as root (initdb refuses root), listens on
127.0.0.1 on a free port (and a Unix socket in its own directory, never the system's), trusts local
connections, and is stopped and removed at the end. Each test gets a database of its own.

    def test_x(store_url: str) -> None: ...        # runs twice: on SQLite and on PostgreSQL
    def test_y(postgres: PostgresServer) -> None:   # the server itself (restart it, make databases)
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

USER = "vnetbench"  # the database superuser initdb creates (trust authentication on 127.0.0.1)


def postgres_bin() -> Path | None:
    """The newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl, if the package is installed."""
    found = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")]
    found = [d for d in found if (d / "initdb").exists()]
    return max(found, key=lambda d: int(d.parent.name)) if found else None


def missing_postgres() -> str | None:
    if postgres_bin() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "no 'postgres' user to run the server as (initdb refuses root); apt-get install postgresql"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    """One server in a temporary directory; `url(db)` gives a SQLAlchemy URL for psycopg 3."""

    bindir: Path
    root: Path
    port: int = 0
    _names: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    def _as_owner(self) -> dict[str, object]:
        if os.geteuid() != 0:
            return {}
        owner = pwd.getpwnam("postgres")
        return {"user": owner.pw_uid, "group": owner.pw_gid, "env": {**os.environ, "HOME": str(self.root)}}

    def _run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, cwd=self.root, **self._as_owner()
        )
        if proc.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr}\n{tail}")
        return proc

    def init(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.datadir),
            "-U",
            USER,
            "--auth=trust",
            "--no-sync",
            "--encoding=UTF8",
            "--locale=C",
        )

    def start(self) -> None:
        """Start on the same port as before (a restart keeps the URL), or on a free one the first time."""
        self.port = self.port or _free_port()
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.datadir),
            "-l",
            str(self.root / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", mode, "-w", "-t", "60", "stop")

    def restart(self) -> None:
        """Stop (dropping every connection) and start again on the same port."""
        self.stop("fast")
        self.start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = f"vnb_test_{next(self._names)}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={USER} dbname=postgres") as conn:
            conn.autocommit = True
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """Init, start, yield, stop, remove: a server that leaves nothing behind."""
    bindir = postgres_bin()
    assert bindir is not None, missing_postgres()
    root = Path(tempfile.mkdtemp(prefix="vnb-pg-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
    server = PostgresServer(bindir, root)
    try:
        server.init()
        for attempt in range(3):  # the free port may be taken between choosing and binding it
            try:
                server.start()
                break
            except RuntimeError:
                if attempt == 2:
                    raise
                server.port = 0
        yield server
    finally:
        if (server.datadir / "postmaster.pid").exists():
            with contextlib.suppress(Exception):
                server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    reason = missing_postgres()
    if reason:
        pytest.skip(reason)
    with running_postgres() as server:
        yield server


BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store on each backend: a SQLite file, or a new database on the test server."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()
