"""A throwaway PostgreSQL cluster for the test run.

initdb into a temporary directory, ``pg_ctl start`` on a free port on 127.0.0.1, stopped and
removed at the end. PostgreSQL refuses to run as root: as root the cluster belongs to the
``postgres`` user that Debian's package creates. Durability is off (fsync, synchronous_commit):
the tests kill workers, never the machine.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg
from psycopg import sql

__all__ = ["Cluster", "find_bindir"]


def find_bindir() -> Path | None:
    """PostgreSQL's programs: $LITECRAWL_PG_BINDIR, Debian's newest, or initdb on PATH."""
    given = os.environ.get("LITECRAWL_PG_BINDIR")
    if given:
        return Path(given)
    debian = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if debian:
        return Path(debian[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class Cluster:
    def __init__(self, bindir: Path, durable: bool = False, options: str = "") -> None:
        self.bindir = bindir
        self.durable = durable  # PostgreSQL's own defaults (the benchmarks), not the tests' speed
        self.options = options  # more server settings (``-c name=value ...``)
        self.dir = Path(tempfile.mkdtemp(prefix="litecrawl-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        self.user = "litecrawl"
        self._names = itertools.count(1)
        self._template: str | None = None  # a database migrated once, for create_database
        self._owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            try:
                self._owner = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise RuntimeError(
                    "running as root needs a 'postgres' user for the cluster"
                ) from exc
            os.chown(self.dir, self._owner.pw_uid, self._owner.pw_gid)

    def start(self) -> None:
        self._run(
            "initdb", "-D", str(self.data), "-U", self.user, "-A", "trust", "--no-sync",
            "-E", "UTF8", "--locale=C",
        )  # fmt: skip
        self._start()

    def _start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c max_connections=200"
        )
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        options += f" {self.options}"
        # -l: the server's output goes to the log, never to our pipes (which would then stay
        # open and hang the capture)
        self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"), "-w",
            "start",
        )  # fmt: skip

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def restart(self) -> None:
        """Stop fast and start again (a database restart under a running crawl)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        self._start()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, migrated: bool = False) -> str:
        """A new database, empty or ``migrated`` (litecrawl's schema in force and no rows, as
        the first store to open it leaves it: a copy of one database migrated once, where each
        database migrated on its own cost ~0.7 s and ~0.16 s of the server's CPU); its URL."""
        name = f"t{next(self._names)}"
        template = self._migrated() if migrated else "template1"
        # a statement, not ``createdb``: no process (runuser, createdb) per test database.
        # FILE_COPY (PostgreSQL 15+) copies the template's files instead of writing them
        # through the WAL, as before 15: 0.04 against 0.13 s of the server's CPU and 0.13
        # against 0.38 s a database (10 of each at load ~15), ~180 databases a run
        with psycopg.connect(self.url(), autocommit=True) as conn:
            copy = conn.info.server_version >= 150000
            statement = "CREATE DATABASE {} TEMPLATE {}" + (" STRATEGY FILE_COPY" if copy else "")
            conn.execute(sql.SQL(statement).format(sql.Identifier(name), sql.Identifier(template)))
        return self.url(name)

    def _migrated(self) -> str:
        """The database the migrated ones are copied from (made at the first need; nothing
        connects to it after, as a template must)."""
        if self._template is None:
            from litecrawl.store.postgres.connection import migrate_database

            url = self.create_database()
            migrate_database(url)
            self._template = url.rsplit("/", 1)[1]
        return self._template

    def _run(self, program: str, *args: str) -> None:
        cmd = [str(self.bindir / program), *args]
        if self._owner is not None:
            cmd = ["runuser", "-u", self._owner.pw_name, "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self.dir, check=False)
        if done.returncode != 0:
            log = self.dir / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(cmd)}: {done.stderr or done.stdout}\n{tail}")


def _free_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port
