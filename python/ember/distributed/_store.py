"""Key-value stores for rendezvous (PyTorch's ``TCPStore``, ``HashStore``, ``PrefixStore``).

The store carries only small control messages: the rank-0 address book, NCCL's unique ids, and
the collective progress markers that name the ranks missing from a collective that timed out.
Array data never goes through it: collectives use MPI (CPU) or NCCL (GPU).
"""

from __future__ import annotations

import datetime
import pickle
import socket
import struct
import threading
import time

__all__ = ["HashStore", "PrefixStore", "Store", "TCPStore"]

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


def _seconds(timeout, who):
    """`timeout` (a ``datetime.timedelta`` or a number of seconds) in seconds."""
    if isinstance(timeout, datetime.timedelta):
        s = timeout.total_seconds()
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        s = float(timeout)
    else:
        raise TypeError(
            f"{who}: timeout must be a datetime.timedelta or a number of seconds, "
            f"got {type(timeout).__name__} {timeout!r}"
        )
    if not s > 0:
        raise ValueError(f"{who}: timeout must be positive, got {timeout!r}")
    return s


def _as_bytes(value, who):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{who}: value must be str or bytes, got {type(value).__name__}")


class Store:
    """Base class of the stores: ``set``/``get``/``add``/``check``/``wait``/``delete_key``."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = _seconds(timeout, f"{type(self).__name__}")

    @property
    def timeout(self):
        return datetime.timedelta(seconds=self._timeout)

    def set_timeout(self, timeout):
        self._timeout = _seconds(timeout, f"{type(self).__name__}.set_timeout")

    def compare_set(self, key, expected_value, desired_value):
        """Sets `key` to `desired_value` if it holds `expected_value` (or is absent and
        `expected_value` is empty); returns the value now held."""
        return self._call(
            "compare_set",
            key,
            _as_bytes(expected_value, "compare_set"),
            _as_bytes(desired_value, "compare_set"),
        )


class _Table:
    """The dictionary behind a store, with waiting on keys."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def run(self, op, args, timeout):
        with self.cond:
            if op in ("set", "set_nowait"):
                self.data[args[0]] = args[1]
                self.cond.notify_all()
                return None
            if op == "get":
                if not self.cond.wait_for(lambda: args[0] in self.data, timeout):
                    return _Timeout(args[0])
                return self.data[args[0]]
            if op == "add":
                v = int(self.data.get(args[0], b"0")) + args[1]
                self.data[args[0]] = str(v).encode()
                self.cond.notify_all()
                return v
            if op == "check":
                return all(k in self.data for k in args[0])
            if op == "wait":
                ok = self.cond.wait_for(lambda: all(k in self.data for k in args[0]), timeout)
                return None if ok else _Timeout([k for k in args[0] if k not in self.data])
            if op == "delete_key":
                return self.data.pop(args[0], None) is not None
            if op == "num_keys":
                return len(self.data)
            if op == "compare_set":
                key, expected, desired = args
                cur = self.data.get(key)
                if cur == expected or (cur is None and expected == b""):
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return cur if cur is not None else expected
        raise ValueError(f"store: unknown operation {op!r}")


class _Timeout:
    def __init__(self, keys):
        self.keys = keys


class HashStore(Store):
    """An in-process store (threads of one process share it)."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        super().__init__(timeout)
        self._table = _Table()

    def _call(self, op, *args):
        r = self._table.run(op, args, self._timeout)
        if isinstance(r, _Timeout):
            raise TimeoutError(
                f"{type(self).__name__}.{op}: timed out after {self._timeout:g} s waiting "
                f"for key(s) {r.keys!r}"
            )
        return r

    def set(self, key, value):
        self._call("set", str(key), _as_bytes(value, "set"))

    def get(self, key):
        return self._call("get", str(key))

    def add(self, key, amount):
        return self._call("add", str(key), int(amount))

    def check(self, keys):
        return self._call("check", [str(k) for k in keys])

    def wait(self, keys, timeout=None):
        old = self._timeout
        if timeout is not None:
            self._timeout = _seconds(timeout, f"{type(self).__name__}.wait")
        try:
            self._call("wait", [str(k) for k in keys])
        finally:
            self._timeout = old

    def delete_key(self, key):
        return self._call("delete_key", str(key))

    def num_keys(self):
        return self._call("num_keys")


def _send(sock, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("store: connection closed by the peer")
        buf += chunk
    return bytes(buf)


def _recv(sock):
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


class _Server:
    """The TCPStore server: a thread per client over one shared table."""

    def __init__(self, host, port):
        self.table = _Table()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True, name="ember-store").start()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            while True:
                op, args, timeout = _recv(conn)
                r = self.table.run(op, args, timeout)
                if op != "set_nowait":
                    _send(conn, r)
        except (ConnectionError, OSError, EOFError):
            pass
        finally:
            conn.close()

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass


class TCPStore(Store):
    """PyTorch's ``TCPStore(host_name, port, world_size=None, is_master=False, timeout=...,
    wait_for_workers=True)``: the master serves the table from a thread; every process
    (the master too) is a client. ``port=0`` on the master picks a free port (see ``.port``)."""

    def __init__(
        self,
        host_name,
        port,
        world_size=None,
        is_master=False,
        timeout=_DEFAULT_TIMEOUT,
        wait_for_workers=True,
    ):
        super().__init__(timeout)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port < 65536:
            raise ValueError(f"TCPStore: port must be an int in [0, 65536), got {port!r}")
        if port == 0 and not is_master:
            raise ValueError("TCPStore: port=0 (pick a free port) is only valid on the master")
        self.host = host_name
        self._server = (
            _Server("" if host_name in ("", "0.0.0.0") else host_name, port)
            if (is_master)
            else None
        )
        self.port = self._server.port if self._server is not None else port
        self._lock = threading.Lock()
        self._sock = self._connect()
        if world_size is not None and wait_for_workers:
            self.add("ember/store/workers", 1)
            deadline = time.monotonic() + self._timeout
            while is_master and int(self.get("ember/store/workers")) < world_size:
                if time.monotonic() > deadline:
                    n = int(self.get("ember/store/workers"))
                    raise TimeoutError(
                        f"TCPStore: timed out after {self._timeout:g} s waiting for "
                        f"{world_size} workers on {host_name}:{self.port}; {n} arrived"
                    )
                time.sleep(0.01)

    def _connect(self):
        deadline = time.monotonic() + self._timeout
        delay = 0.01
        while True:
            try:
                s = socket.create_connection((self.host or "127.0.0.1", self.port), timeout=5)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                s.settimeout(None)
                return s
            except OSError as e:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"TCPStore: could not connect to {self.host}:{self.port} within "
                        f"{self._timeout:g} s ({e})"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _call(self, op, *args):
        with self._lock:
            try:
                _send(self._sock, (op, args, self._timeout))
                if op == "set_nowait":
                    return None
                self._sock.settimeout(self._timeout + 5)
                r = _recv(self._sock)
                self._sock.settimeout(None)
            except (TimeoutError, ConnectionError, OSError) as e:
                self._sock.close()
                self._sock = self._connect()
                raise RuntimeError(f"TCPStore.{op}: lost the store connection ({e})") from None
        if isinstance(r, _Timeout):
            raise TimeoutError(
                f"TCPStore.{op}: timed out after {self._timeout:g} s waiting for key(s) {r.keys!r}"
            )
        return r

    def set(self, key, value):
        self._call("set", str(key), _as_bytes(value, "TCPStore.set"))

    def _set_nowait(self, key, value):
        """A set that does not wait for the reply (progress markers on the collective path)."""
        self._call("set_nowait", str(key), _as_bytes(value, "TCPStore.set"))

    def get(self, key):
        return self._call("get", str(key))

    def add(self, key, amount):
        return self._call("add", str(key), int(amount))

    def check(self, keys):
        return self._call("check", [str(k) for k in keys])

    def wait(self, keys, timeout=None):
        old = self._timeout
        if timeout is not None:
            self._timeout = _seconds(timeout, "TCPStore.wait")
        try:
            self._call("wait", [str(k) for k in keys])
        finally:
            self._timeout = old

    def delete_key(self, key):
        return self._call("delete_key", str(key))

    def num_keys(self):
        return self._call("num_keys")

    def close(self):
        try:
            self._sock.close()
        except OSError:
            pass
        if self._server is not None:
            self._server.close()


class PrefixStore(Store):
    """PyTorch's ``PrefixStore(prefix, store)``: every key gets ``prefix + "/"``."""

    def __init__(self, prefix, store):
        super().__init__(store._timeout)
        self.prefix = str(prefix)
        self.underlying_store = store

    def _k(self, key):
        return f"{self.prefix}/{key}"

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def _set_nowait(self, key, value):
        s = self.underlying_store
        (s._set_nowait if hasattr(s, "_set_nowait") else s.set)(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        self.underlying_store.wait([self._k(k) for k in keys], timeout)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)
