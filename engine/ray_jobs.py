"""``procvis generate --ray``: shard generation as Ray tasks on a cluster.

:class:`RayExecutor` has the contract of :mod:`engine.outputs`' local runners: it takes
the same jobs, runs each with the same per-job function (``outputs._worker`` for a
``parquet`` or ``imagefolder`` shard, ``outputs._hub_worker`` for a piece of an ``hf``
shard), and calls ``done(result)`` in the driver as results arrive (``run_ordered``: in
the order of the jobs), so the lock, journal, resume and manifest stay in the driver and
the bytes are those of a local run.

Where a shard lands:

* a node that sees the output folder (the same path on a shared file system, or the
  driver's own machine) writes the shard there itself, atomically, as a local worker does;
* a node that does not writes it into a temporary folder of its own and sends the bytes
  back; the driver installs them in the output folder under a temporary name and a rename.

Which case applies is found per task: the driver puts a probe file holding a random token
in the output folder, and a task writes there only when it reads that token (a folder of
the same name on another machine never holds it). ``hf`` pieces are always sent back: the
driver writes every ``hf`` shard.

Every node must draw the same bytes: each worker process checks, before its first task of
a run, that its procvis code, glyph font and the content of every file a setting names are
those of the driver, and fails with a one-line :class:`UserError` naming the node and what
differs (such a failure is not retried). A task whose worker or node dies is retried
(Ray's ``max_retries``), as is one that fails with an ``OSError``. When the driver stops
(Ctrl-C, a signal), its tasks are cancelled; killed, Ray ends them with it; the same command
then resumes from the journal as a local run does.

Ray is optional (``pip install 'procvis[ray]'``): it is imported when a run starts.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import json
import logging
import os
import secrets
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path

from . import outputs
from .canvas import BUDGET_ENV, memory_budget
from .errors import UserError

LOCAL = "local"                # --ray with no address: a Ray instance on this machine, for the run
MAX_RETRIES = 3                # attempts after the first, for a task whose worker, node or disk failed
IN_FLIGHT_PER_CPU = 2          # tasks submitted at once per CPU of the cluster (jobs are consumed lazily)
CONNECT_TIMEOUT_S = 5.0        # how long the address check waits for the cluster to answer
WAIT_S = 0.5                   # how often the driver wakes while waiting (signals land between waits)
RESOURCES_EVERY_S = 10.0       # how often the driver re-reads the cluster's CPUs (a cluster may grow)
PROBE_NAME = "ray-probe"
CODE_PACKAGES = ("engine", "kernels", "scenes")
ALLOWED = "an address host:port (what `ray start --head` printed), ray://host:port, 'auto', or no value"


# ---------------------------------------------------------------- the address

def parse_address(address) -> str:
    """``address`` checked and normalised: ``LOCAL`` (for ``None``, ``""`` or ``"local"``),
    ``"auto"``, ``"host:port"`` or ``"ray://host:port"``; :class:`UserError` otherwise."""
    if address is None or (isinstance(address, str) and address.strip() in ("", LOCAL)):
        return LOCAL
    if not isinstance(address, str):
        raise UserError(f"--ray {address!r} is not an address; allowed: {ALLOWED}")
    address = address.strip()
    if address == "auto":
        return address
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in host):
        raise UserError(f"--ray {address!r} is not an address; allowed: {ALLOWED}")
    return address


def _import_ray():
    """The ``ray`` module; :class:`UserError` saying how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise UserError("--ray needs Ray, which is not installed; allowed: install it with "
                        "pip install 'procvis[ray]' (on the driver and on every node)") from None
    return ray


def _bootstrap(address: str) -> str:
    """The ``host:port`` that ``address`` (``auto``: ``$RAY_ADDRESS`` or the cluster this
    machine runs) stands for; :class:`UserError` when ``auto`` finds no cluster."""
    if address != "auto":
        return address.removeprefix("ray://")
    from ray._private import services      # Ray's own lookup, so 'auto' means what it means to Ray

    try:
        found = services.canonicalize_bootstrap_address("auto")
    except (ConnectionError, ValueError):
        found = None
    if not found:
        raise UserError("--ray 'auto' finds no Ray cluster on this machine and $RAY_ADDRESS is not set; allowed: "
                        f"{ALLOWED} (start one with `ray start --head`)")
    return found


def check_reachable(address: str) -> None:
    """:class:`UserError` (one line: the address, why, what is allowed) unless something
    answers at ``address`` within ``CONNECT_TIMEOUT_S`` (Ray itself would wait minutes)."""
    if address == LOCAL:
        return
    target = _bootstrap(address)
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as e:
        why = "no answer" if isinstance(e, TimeoutError) else (e.strerror or type(e).__name__).lower()
        raise UserError(f"--ray {address!r}: no Ray cluster answers at {target} ({why}); allowed: {ALLOWED}") from None


@contextlib.contextmanager
def connected(address: str):
    """Within: a connection to the cluster at ``address`` (``LOCAL``: a Ray instance started
    on this machine for the run, with every core); one made here is closed on the way out,
    one the caller already holds is used and left open."""
    ray = _import_ray()
    if ray.is_initialized():
        yield ray
        return
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    with _handlers_kept():
        if address == LOCAL:
            ray.init(address="local", num_cpus=os.cpu_count() or 1, include_dashboard=False, **quiet)
        else:
            check_reachable(address)
            try:
                ray.init(address=_bootstrap(address) if address == "auto" else address, **quiet)
            except (ConnectionError, RuntimeError) as e:
                why = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise UserError(f"--ray {address!r}: cannot join the Ray cluster there ({why}); "
                                f"allowed: {ALLOWED}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


@contextlib.contextmanager
def _handlers_kept():
    """Within: ``ray.init`` may install its own SIGTERM handler (which exits at once); on the
    way out the handlers of SIGINT, SIGTERM and SIGHUP are those from before, so a run stopped
    by a signal still ends its tasks and removes its temporary files (see engine.outputs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)]
    before = {s: signal.getsignal(s) for s in names}
    try:
        yield
    finally:
        for s, handler in before.items():
            if handler is not None:
                signal.signal(s, handler)


# ---------------------------------------------------------------- what every node must share

@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 (16 hex digits) over the names and bytes of procvis's drawing code (the
    ``engine``, ``kernels`` and ``scenes`` packages as installed here), read once per
    process: the code it has loaded."""
    h = hashlib.sha256()
    for name in CODE_PACKAGES:
        base = Path(__import__(name).__file__).parent
        for f in sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".txt")):
            h.update(f"{name}/{f.relative_to(base).as_posix()}\0".encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def node_facts(cfg: outputs.RunConfig) -> dict:
    """What decides a run's bytes on this machine: the procvis version and code, the font,
    and the content of every file a setting of ``cfg`` names."""
    return {"procvis version": outputs.procvis_version(), "procvis code": code_digest(),
            "font": outputs.font_digest(), "setting inputs": outputs.input_digests(cfg.settings),
            "PNG encoder": png_digest()}


@functools.lru_cache(maxsize=1)
def png_digest() -> str:
    """A digest of the PNG bytes this machine's encoder makes of a fixed image: noise-like,
    so it goes to zlib (as photographs do, :func:`kernels.deflate.zlib_rows`), and another
    zlib may compress the same pixels to other bytes."""
    import torch

    image = (torch.arange(3 * 48 * 48) * 7919 % 251).to(torch.uint8).reshape(3, 48, 48)
    return hashlib.sha256(outputs.encode_png(image)).hexdigest()[:16]


_CHECKED: set[str] = set()      # in a worker process: the runs (facts digests) already checked


def _check_node(facts: dict) -> None:
    """In a worker, once per run: :class:`UserError` naming this node and the first fact that
    differs from the driver's ``facts``; also sets this process's threads and memory share."""
    key = hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()
    if key in _CHECKED:
        return
    import ray

    cfg = facts["config"]
    mine = node_facts(cfg)
    for name, want in facts["node"].items():
        if mine[name] != want:
            node = ray.util.get_node_ip_address()
            raise UserError(f"node {node} has another {name} than the driver ({mine[name]!r} there, {want!r} on the "
                            "driver): every node needs the same procvis install, font and setting files")
    _set_threads(ray)
    _CHECKED.add(key)


def _set_threads(ray) -> None:
    """Give this worker process its task's CPUs as threads and its share of the node's memory."""
    import numba
    import torch

    cpus = max(1, int(ray.get_runtime_context().get_assigned_resources().get("CPU", 1)))
    if not os.environ.get(BUDGET_ENV):
        os.environ[BUDGET_ENV] = str(max(1, memory_budget() * cpus // (os.cpu_count() or 1)))
    torch.set_num_threads(cpus)
    numba.set_num_threads(min(cpus, numba.config.NUMBA_NUM_THREADS))


# ---------------------------------------------------------------- the tasks

def _sees(probe: str | None, token: str) -> bool:
    """Whether this node reads ``token`` in the driver's ``probe`` file (a shared folder)."""
    if probe is None:
        return False
    try:
        return Path(probe).read_text() == token
    except (OSError, UnicodeDecodeError):
        return False


def _read_back(tmp: str, rel: str) -> dict[str, bytes]:
    """``{file below rel: bytes}`` of the shard written at ``tmp/rel`` (``""``: the file itself)."""
    path = Path(tmp) / rel
    if path.is_file():
        return {"": path.read_bytes()}
    return {f.name: f.read_bytes() for f in sorted(path.iterdir())}


def shard_task(fn, job: tuple, facts: dict, probe: str | None, token: str) -> tuple:
    """Run ``fn(job)`` on a node (``job[0]``: the output folder). Returns ``(result, None)``
    when the shard was written into the folder here, else ``(result, bytes)`` of a shard
    written into a temporary folder of this node (:func:`_read_back`), for the driver."""
    _check_node(facts)
    if _sees(probe, token):
        return fn(job), None
    with tempfile.TemporaryDirectory(prefix="procvis-ray-") as tmp:
        result = fn((tmp, *job[1:]))
        return result, _read_back(tmp, result[0])


def piece_task(fn, job: tuple, facts: dict) -> tuple:
    """Run ``fn(job)`` on a node and return its result (an ``hf`` piece: rows for the driver)."""
    _check_node(facts)
    return fn(job)


def _install(root: Path, rel: str, payload: dict[str, bytes], marker: str) -> None:
    """Write a shard sent back by a node at ``root/rel``: under a temporary name with the
    run's ``marker`` (removed by any later run), then renamed into place."""
    final = root / rel
    tmp = final.parent / f"{outputs.TMP_PREFIX}{marker}-{os.getpid()}-{final.name}"
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        outputs._remove(tmp)
        if set(payload) == {""}:
            tmp.write_bytes(payload[""])
        else:
            tmp.mkdir()
            for name, data in payload.items():
                (tmp / name).write_bytes(data)
        outputs._install(tmp, final, marker)
    except BaseException as e:
        outputs._remove(tmp)
        if isinstance(e, OSError) and outputs._disk_full(e):
            raise outputs._disk_full_error(root, rel) from None
        raise


# ---------------------------------------------------------------- the driver

def _config_of(job: tuple) -> outputs.RunConfig:
    """The :class:`RunConfig` a job carries."""
    return next(x for x in job if isinstance(x, outputs.RunConfig))


def _unwrap(ray, ref):
    """``ray.get(ref)``; a task's :class:`UserError` is raised as itself (one line)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, UserError):
            raise cause from None
        raise


class _Window:
    """How many tasks may be in flight: ``IN_FLIGHT_PER_CPU`` per CPU of the cluster,
    re-read every ``RESOURCES_EVERY_S``."""

    def __init__(self, ray):
        self.ray, self.at, self.size = ray, -RESOURCES_EVERY_S, 1

    def __call__(self) -> int:
        """The current window size."""
        if time.monotonic() - self.at >= RESOURCES_EVERY_S:
            cpus = self.ray.cluster_resources().get("CPU", 1)
            self.size, self.at = max(1, int(IN_FLIGHT_PER_CPU * cpus)), time.monotonic()
        return self.size


class RayExecutor:
    """Runs :mod:`engine.outputs`' jobs as Ray tasks on the cluster at ``address`` (see the
    module docstring); ``address`` is checked (syntax, and that a cluster answers) when
    the executor is made, before anything is written. ``max_retries``: attempts after the
    first for a task whose worker or node dies; ``shared=False``: every node sends its
    shards back to the driver, even one that sees the output folder; ``check_code=False``:
    the nodes' procvis code is not compared with the driver's (for a checkout being edited
    while it runs; the version, font and setting files still are)."""

    def __init__(self, address=LOCAL, max_retries: int = MAX_RETRIES, shared: bool | None = None,
                 check_code: bool = True):
        self.address = parse_address(address)
        if isinstance(max_retries, bool) or int(max_retries) != max_retries or max_retries < 0:
            raise UserError(f"max_retries={max_retries!r} must be a whole number from 0 up")
        if shared not in (None, False):
            raise UserError(f"shared={shared!r}; allowed: None (each node writes into the output folder when it "
                            "sees it) or False (every shard is sent back to the driver)")
        self.max_retries, self.shared, self.check_code = int(max_retries), shared, bool(check_code)
        _import_ray()
        check_reachable(self.address)

    def _options(self) -> dict:
        """The Ray options of every task: one CPU, the retries."""
        return {"num_cpus": 1, "max_retries": self.max_retries, "retry_exceptions": [OSError]}

    def run_jobs(self, jobs, workers: int, done) -> None:
        """Write every shard of ``jobs`` (``(out, cfg, shard)``, consumed lazily) with
        ``outputs._worker`` on the cluster, calling ``done(result)`` as each completes;
        ``workers`` is not used (the cluster's CPUs decide). On an interruption the tasks in
        flight are cancelled before the exception propagates (:func:`_cancel_if_interrupted`)."""
        with connected(self.address) as ray, _Probe() as probe:
            task = ray.remote(shard_task).options(**self._options())
            facts, pending, queue, window = None, {}, iter(jobs), _Window(ray)
            try:
                while True:
                    for job in _take(queue, window() - len(pending)):
                        job = (os.path.abspath(job[0]), *job[1:])     # a worker's folder is not ours
                        facts = facts or _facts(job, self.check_code)
                        if self.shared is None:
                            probe.place(job[0], _config_of(job).marker())
                        pending[task.remote(outputs._worker, job, facts, probe.path, probe.token)] = job
                    if not pending:
                        return
                    ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
                    for ref in ready:
                        job = pending.pop(ref)
                        _land(job, _unwrap(ray, ref), done)
            except BaseException as e:
                _cancel_if_interrupted(ray, pending, e)
                raise

    def run_ordered(self, jobs, workers: int, done) -> None:
        """Make every piece of ``jobs`` (``outputs._hub_piece`` arguments, consumed lazily)
        with ``outputs._hub_worker`` on the cluster and call ``done(result)`` in the order of
        ``jobs``; ``workers`` is not used. On an interruption the tasks in flight are
        cancelled before the exception propagates (:func:`_cancel_if_interrupted`)."""
        with connected(self.address) as ray:
            task = ray.remote(piece_task).options(**self._options())
            facts, order, queue, window = None, [], iter(jobs), _Window(ray)
            try:
                while True:
                    for job in _take(queue, window() - len(order)):
                        facts = facts or _facts(job, self.check_code)
                        order.append(task.remote(outputs._hub_worker, job, facts))
                    if not order:
                        return
                    ready, _ = ray.wait(order[:1], num_returns=1, timeout=WAIT_S)
                    if ready:
                        done(_unwrap(ray, order.pop(0)))
            except BaseException as e:
                _cancel_if_interrupted(ray, order, e)
                raise


def _take(queue, n: int) -> list:
    """Up to ``n`` more jobs from ``queue`` (none when ``n`` is not positive)."""
    return list(itertools.islice(queue, max(0, n)))


def _facts(job: tuple, check_code: bool) -> dict:
    """What every node must share with the driver for ``job``'s run (:func:`node_facts`;
    its code only when ``check_code``)."""
    cfg = _config_of(job)
    node = node_facts(cfg)
    if not check_code:
        del node["procvis code"]
    return {"config": cfg, "node": node}


def _land(job: tuple, value: tuple, done) -> None:
    """Install a shard a node sent back (if it did) and hand its result to ``done``."""
    result, payload = value
    if payload is not None:
        _install(Path(job[0]), result[0], payload, _config_of(job).marker())
    done(result)


def _cancel_if_interrupted(ray, refs, error: BaseException) -> None:
    """Cancel the tasks of ``refs`` (ending their workers, ignoring those already done) when
    ``error`` interrupts the run (Ctrl-C, a signal). After an ordinary error they are left to
    end on their own (each fails the same check, or finishes; Ray ends the rest when this
    driver disconnects): cancelling a task whose reply is already on its way can abort the
    whole driver process (a race inside Ray between cancellation and completion, "Check
    failed: it != submissible_tasks_.end()"), which took a test run down with it."""
    if isinstance(error, Exception):
        return
    for ref in list(refs):
        with contextlib.suppress(Exception):
            ray.cancel(ref, force=True)


class _Probe:
    """The probe file in the output folder: its path and random token, so a task knows
    whether its node sees the folder (:func:`_sees`); removed on the way out."""

    def __init__(self):
        self.path: str | None = None
        self.token = secrets.token_hex(16)

    def place(self, out: str, marker: str) -> None:
        """Write the probe into ``out`` (once); its name carries the run's ``marker`` so a
        later run removes it when this driver was killed."""
        if self.path is None:
            path = Path(out) / f"{outputs.TMP_PREFIX}{marker}-{os.getpid()}-{PROBE_NAME}"
            path.write_text(self.token)
            self.path = str(path.resolve())

    def __enter__(self) -> _Probe:
        return self

    def __exit__(self, *exc) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)


def generate(pattern: str, out: str, *, address=LOCAL, max_retries: int = MAX_RETRIES, shared: bool | None = None,
             **kwargs) -> dict:
    """:func:`engine.outputs.generate` with its shards made on the Ray cluster at ``address``
    (``LOCAL``, ``"auto"``, ``"host:port"``, ``"ray://host:port"``); ``kwargs``: the other
    arguments of ``generate``. Returns the manifest, the same as a local run's."""
    return outputs.generate(pattern, out, executor=RayExecutor(address, max_retries, shared), **kwargs)


__all__ = ["RayExecutor", "LOCAL", "parse_address", "check_reachable", "connected", "generate", "node_facts"]
