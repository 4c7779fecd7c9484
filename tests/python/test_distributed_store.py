"""The rendezvous stores of ember.distributed (TCPStore, HashStore, PrefixStore), PyTorch's
semantics, in one process (clients on threads)."""

import datetime
import threading
import time

import pytest
from ember.distributed import HashStore, PrefixStore, TCPStore


def _stores():
    master = TCPStore("127.0.0.1", 0, world_size=None, is_master=True, timeout=5)
    client = TCPStore("127.0.0.1", master.port, is_master=False, timeout=5)
    return master, client


@pytest.mark.parametrize("kind", ["tcp", "hash"])
def test_set_get_add_check_delete(kind):
    if kind == "tcp":
        a, b = _stores()
    else:
        a = b = HashStore()
    a.set("k", "v")
    assert b.get("k") == b"v"
    b.set("bytes", b"\x00\x01")
    assert a.get("bytes") == b"\x00\x01"
    assert a.add("n", 3) == 3 and b.add("n", -1) == 2 and a.get("n") == b"2"
    assert a.check(["k", "n"]) and not a.check(["k", "missing"])
    assert a.num_keys() >= 3
    assert b.delete_key("k") and not b.delete_key("k")
    assert a.compare_set("c", "", "first") == b"first"
    assert a.compare_set("c", "wrong", "second") == b"first"
    assert a.compare_set("c", "first", "second") == b"second"
    with pytest.raises(TypeError, match="value"):
        a.set("x", 3)


def test_get_waits_for_a_later_set_and_times_out():
    a, b = _stores()
    threading.Timer(0.2, lambda: a.set("late", "yes")).start()
    t0 = time.monotonic()
    assert b.get("late") == b"yes" and time.monotonic() - t0 >= 0.15
    b.set_timeout(datetime.timedelta(seconds=0.3))
    with pytest.raises(TimeoutError, match="never"):
        b.get("never")
    assert b.get("late") == b"yes"  # the client reconnects after a timeout
    with pytest.raises(TimeoutError, match="absent"):
        b.wait(["late", "absent"], timeout=0.2)
    b.wait(["late"])


def test_master_waits_for_workers_and_prefix_store():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    box = {}

    def master():
        t0 = time.monotonic()
        box["m"] = TCPStore("127.0.0.1", port, world_size=3, is_master=True, timeout=5)
        box["waited"] = time.monotonic() - t0

    t = threading.Thread(target=master)
    t.start()
    time.sleep(0.3)
    assert "m" not in box  # still waiting for the two workers
    w1 = TCPStore("127.0.0.1", port, world_size=3, is_master=False, timeout=5)
    w2 = TCPStore("127.0.0.1", port, world_size=3, is_master=False, timeout=5)
    t.join(5)
    assert box["waited"] >= 0.25 and int(box["m"].get("ember/store/workers")) == 3
    p1, p2 = PrefixStore("group1", w1), PrefixStore("group1", w2)
    p1.set("x", "1")
    assert p2.get("x") == b"1" and w2.get("group1/x") == b"1"
    assert not PrefixStore("group2", w2).check(["x"])


def test_bad_arguments():
    with pytest.raises(ValueError, match="port"):
        TCPStore("127.0.0.1", 70000, is_master=True)
    with pytest.raises(ValueError, match="port=0"):
        TCPStore("127.0.0.1", 0, is_master=False)
    with pytest.raises(ValueError, match="timeout"):
        HashStore(timeout=-1)
    with pytest.raises(TimeoutError, match="could not connect"):
        TCPStore("127.0.0.1", 1, is_master=False, timeout=0.3)
