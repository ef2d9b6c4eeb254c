"""``mxc-launch``: start a distributed job (MXNet 1.x's ``tools/launch.py``, over MPI).

Usage (as MXNet's launcher)::

    mxc-launch -n 2 python train.py --kv-store dist_sync           # 2 ranks on this machine
    mxc-launch -n 4 -H hosts --launcher ssh python train.py         # over ssh, ranks round-robin
    mxc-launch -n 8 -H hosts --launcher mpi python train.py         # the MPI's own bootstrap

Everything before the command is an option of the launcher; the command starts at the first
word that is not an option (or after ``--``), so the script's own options are never taken.

Launchers
  local  (the default without ``-H``) the ranks run on this machine as ONE MPI job: they are
         started by ``mpiexec`` (the one of the MPICH wheel next to this Python, else the first
         on PATH), so mpi4py inside them forms one COMM_WORLD, which the distributed KVStore
         uses. Without any mpiexec the ranks still start, each with the DMLC_* variables, as
         plain processes (a warning says that MPI programs will not see each other).
  mpi    ``mpiexec -f HOSTFILE``: the hostfile is in the MPI's own format (``host[:slots]``).
  ssh    (the default with ``-H``) hydra's ssh bootstrap with the ssh command of
         ``--ssh-command`` / ``MXC_LAUNCH_SSH`` (default ``ssh``); the hostfile is MXNet's
         format, one ``host[:ssh-port]`` per line, ranks assigned round-robin. Any command that
         takes ``[-p PORT] HOST COMMAND-STRING`` and runs the string there works as a stand-in.
  sge, yarn: MXNet's cluster launchers are not supported (an error says so).

What each rank gets: ``DMLC_ROLE=worker``, ``DMLC_NUM_WORKER``, ``DMLC_NUM_SERVER``,
``DMLC_WORKER_ID`` and ``DMLC_TASK_ID`` (its rank), ``DMLC_NODE_HOST``, ``DMLC_JOB_CLUSTER``,
``MXC_LAUNCH_RANK``/``MXC_LAUNCH_LOCAL_RANK``/``MXC_LAUNCH_SIZE``, ``PYTHONUNBUFFERED=1``
(unless set), and the ``--env``/``--env-worker`` settings. ``--env NAME`` passes the launcher's
value of NAME (MXNet's meaning), ``--env NAME:VALUE`` or ``--env NAME=VALUE`` sets it.
mxc's distributed KVStore has no server processes (every rank is a worker), so ``-s`` starts
none and ``--env-server`` has nothing to apply to; both are accepted for MXNet's command lines.

Cores (local launcher): the ranks of one machine get disjoint blocks of this process's CPUs,
``len(cpus) // n`` each, rank by local rank (``os.sched_setaffinity`` in the rank's supervisor,
inherited by the rank), when there are at least as many CPUs as ranks; and ``OMP_NUM_THREADS``
defaults to that block size (at least 1) unless set, so ranks do not oversubscribe the machine
with one OpenMP/OpenBLAS thread per core each. ``--bind none`` (or ``MXC_LAUNCH_BIND=none``)
leaves the affinity alone. The block of each rank travels in ``MXC_LAUNCH_CPUS``. (Other launchers
leave placement to the MPI or the hosts.)

Output: every line a rank writes to stdout/stderr comes out on the launcher's stdout/stderr
prefixed with ``[rank] `` (lines end at ``\\n`` or ``\\r``, so progress bars stay readable).

Exit status and faults: the launcher exits with the status of the first rank that ended
non-zero (128+N for a rank killed by signal N), else 0. When a rank ends non-zero, the others
are stopped at once: SIGTERM to each rank's process group, SIGKILL after
``--kill-timeout``/``MXC_LAUNCH_KILL_TIMEOUT`` seconds (default 5). Ctrl-C or SIGTERM of the
launcher does the same to every rank (SIGINT/SIGTERM forwarded, then SIGKILL; a second
Ctrl-C kills at once) and exits 128+signal. Each rank runs under a small supervisor process
that owns the rank's process group (and adopts its orphans), so processes the rank started
(data-loader workers, shells) go with it; on this machine a last sweep kills anything still
carrying the job's ``MXC_LAUNCH_JOB`` id. Nothing is left behind.

This file must stay importable without the ``mxc`` package: the per-rank supervisor runs it as a
plain script (``python launch.py --_rank ...``) so that a rank does not pay for importing mxc
twice.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

__all__ = ["main"]

_THIS = os.path.abspath(__file__)
_MARK = b"@@mxc-launch@@"
_DEFAULT_KILL_TIMEOUT = 5.0
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK",
              "MXC_LAUNCH_RANK", "SLURM_PROCID")
_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
                    "MV2_COMM_WORLD_LOCAL_RANK", "MXC_LAUNCH_LOCAL_RANK", "SLURM_LOCALID")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE",
              "MXC_LAUNCH_SIZE", "SLURM_NTASKS")
_PR_SET_PDEATHSIG = 1
_RANK_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
_PR_SET_CHILD_SUBREAPER = 36


# ---- small helpers -------------------------------------------------------------------------

def _prctl(option, value):
    """Linux prctl through libc; silently nothing elsewhere."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(option, value, 0, 0, 0)
    except Exception:
        pass


def _exit_code(returncode):
    """A Popen returncode as a shell exit status (a signal N becomes 128+N)."""
    if returncode is None:
        return 1
    if returncode < 0:
        return 128 + (-returncode)
    return returncode & 0xFF if returncode > 255 else returncode


def _first_env(names, default=None, env=None):
    env = os.environ if env is None else env
    for name in names:
        val = env.get(name, "")
        if val.strip().lstrip("-").isdigit():
            return int(val)
    return default


def _write_all(fd, data):
    while data:
        try:
            n = os.write(fd, data)
        except InterruptedError:
            continue
        except OSError:          # the reader went away (closed pipe): drop the output
            return
        data = data[n:]


def _split_lines(buf):
    """(complete segments ending in \\n or \\r, the remaining partial segment)."""
    out = []
    start = 0
    for m in re.finditer(rb"\r\n|\n|\r", buf):
        out.append(buf[start:m.end()])
        start = m.end()
    return out, buf[start:]


def _pump(fd, emit, limit=1 << 16):
    """Read ``fd`` to EOF, calling emit(segment) for each line (a long partial line is flushed
    every ``limit`` bytes; the last partial line at EOF gets a newline)."""
    rest = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except InterruptedError:
            continue
        except OSError:
            chunk = b""
        if not chunk:
            break
        lines, rest = _split_lines(rest + chunk)
        for line in lines:
            emit(line)
        if len(rest) >= limit:
            emit(rest + b"\n")
            rest = b""
    if rest:
        emit(rest + b"\n")
    try:
        os.close(fd)
    except OSError:
        pass


# ---- the per-rank supervisor (runs as a plain script on the rank's host) ---------------------

class _Rank(object):
    """Runs the user's command for one rank: sets the rank's variables, prefixes its output,
    forwards signals to its process group, escalates to SIGKILL, adopts and kills its orphans,
    and reports its exit status to the launcher on stderr."""

    def __init__(self, jobid, cmd):
        self.jobid = jobid
        self.cmd = cmd
        self.rank = _first_env(_RANK_VARS, 0)
        self.local_rank = _first_env(_LOCAL_RANK_VARS, self.rank)
        self.size = _first_env(_SIZE_VARS, None)
        self.proc = None
        self.kill_at = None
        self.grace = _kill_timeout(None)
        self.signalled = None

    def _env(self):
        env = dict(os.environ)
        rank = str(self.rank)
        env.update({"DMLC_ROLE": "worker", "DMLC_WORKER_ID": rank, "DMLC_TASK_ID": rank,
                    "MXC_LAUNCH_RANK": rank, "MXC_LAUNCH_LOCAL_RANK": str(self.local_rank)})
        if self.size is not None:
            env["MXC_LAUNCH_SIZE"] = str(self.size)
            env.setdefault("DMLC_NUM_WORKER", str(self.size))
        env.setdefault("DMLC_NODE_HOST", env.get("PMI_HOSTNAME") or socket.gethostname())
        return env

    def _on_signal(self, signum, frame):
        if self.signalled is None:
            self.signalled = signum
        # SIGUSR1 is the launcher's "stop" (hydra forwards it to every rank): SIGTERM the rank
        self._signal_group(signal.SIGTERM if signum == signal.SIGUSR1 else signum)
        if self.kill_at is None:
            self.kill_at = time.monotonic() + self.grace

    def _signal_group(self, signum):
        proc = self.proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def _orphans(self):
        """Processes this supervisor adopted (its rank's children whose parent exited)."""
        me = str(os.getpid())
        found = []
        try:
            names = os.listdir("/proc")
        except OSError:
            return found
        for name in names:
            if not name.isdigit() or (self.proc is not None and int(name) == self.proc.pid):
                continue
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 1 and fields[1] == me.encode() and fields[0] != b"Z":
                found.append(int(name))
        return found

    def _reap(self):
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def _clean_leftovers(self):
        """After the rank's main process ended: stop what it left running (its process group
        and the orphans this supervisor adopted), SIGTERM then SIGKILL after 2 s."""
        pgid = self.proc.pid
        deadline = time.monotonic() + 2.0
        sig = signal.SIGTERM
        while True:
            alive = False
            try:
                os.killpg(pgid, sig)
                alive = True
            except (ProcessLookupError, PermissionError):
                pass
            for pid in self._orphans():
                alive = True
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            self._reap()
            if not alive:
                return
            if sig == signal.SIGKILL and time.monotonic() > deadline + 2.0:
                return
            time.sleep(0.05)
            if time.monotonic() > deadline:
                sig = signal.SIGKILL

    def _bind(self):
        """Pin this supervisor (and so the rank) to its block of MXC_LAUNCH_CPUS."""
        raw = os.environ.get("MXC_LAUNCH_CPUS", "")
        blocks = [b for b in raw.split(";") if b]
        if not blocks or not hasattr(os, "sched_setaffinity"):
            return
        block = blocks[self.local_rank % len(blocks)]
        try:
            os.sched_setaffinity(0, {int(c) for c in block.split(",")})
        except (OSError, ValueError) as exc:
            _write_all(2, ("[%d] mxc-launch: could not pin the rank to CPUs %s: %s\n"
                           % (self.rank, block, exc)).encode())

    def run(self):
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)     # the MPI proxy died: stop the rank
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)            # orphans of the rank come to us
        parent = os.getppid()
        for sig in _RANK_SIGNALS:
            signal.signal(sig, self._on_signal)
        prefix = b"[%d] " % self.rank
        self._bind()
        cmd = list(self.cmd)
        if len(cmd) == 1 and re.search(r"[\s;&|<>$`'\"*?()~]", cmd[0]):
            cmd = ["/bin/sh", "-c", cmd[0]]          # MXNet ran the command through a shell
        elif "/" not in cmd[0] and shutil.which(cmd[0]) is None and os.path.isfile(cmd[0]):
            cmd[0] = "./" + cmd[0]

        def child_setup():
            os.setpgid(0, 0)
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

        try:
            # close_fds=False: the MPI's inheritable descriptors (PMI_FD...) reach the rank
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env=self._env(), close_fds=False,
                                         preexec_fn=child_setup)
        except OSError as exc:
            msg = "%smxc-launch: cannot run %s: %s\n" % (prefix.decode(), shlex.join(cmd),
                                                        exc.strerror or exc)
            _write_all(2, msg.encode())
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            self._report(code)
            return code
        if self.signalled is not None:       # a signal came while the rank was starting
            self._on_signal(self.signalled, None)
        pumps = []
        for src, dst in ((self.proc.stdout, 1), (self.proc.stderr, 2)):
            fd = os.dup(src.fileno())
            src.close()
            emit = (lambda s, d=dst: _write_all(d, prefix + s))
            t = threading.Thread(target=_pump, args=(fd, emit), daemon=True)
            t.start()
            pumps.append(t)
        while True:
            try:
                code = self.proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                pass
            if os.getppid() != parent and self.signalled is None:
                self._on_signal(signal.SIGTERM, None)
            if self.kill_at is not None and time.monotonic() > self.kill_at:
                self._signal_group(signal.SIGKILL)
                self.kill_at = time.monotonic() + 1.0
        self._clean_leftovers()
        for t in pumps:
            t.join(timeout=5.0)
        code = _exit_code(code)
        # the rank is gone: a stop signal arriving now (the launcher stopping the job) must not
        # kill this supervisor during interpreter shutdown and turn the status into 128+N
        for sig in _RANK_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        self._report(code)
        return code

    def _report(self, code):
        _write_all(2, b"%s %s exit rank=%d code=%d\n" % (_MARK, self.jobid.encode(), self.rank,
                                                          code))


def _rank_main(argv):
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("mxc-launch --_rank: expected JOBID -- COMMAND...\n")
        return 2
    return _Rank(argv[0], argv[2:]).run()


def _ssh_shim_main(argv):
    """hydra's ssh bootstrap calls ``shim [-x] HOST COMMAND...``: run it with the configured
    ssh command (``MXC_LAUNCH_SSH``), adding ``-p PORT`` for hosts given as host:port."""
    args = list(argv)
    while args and args[0].startswith("-"):
        args.pop(0)                       # hydra's own ssh options (-x: no X forwarding)
    if len(args) < 2:
        sys.stderr.write("mxc-launch ssh: expected HOST COMMAND, got %r\n" % (argv,))
        return 2
    host, rest = args[0], args[1:]
    ssh = shlex.split(os.environ.get("MXC_LAUNCH_SSH", "") or "ssh")
    ports = dict(p.split("=", 1) for p in os.environ.get("MXC_LAUNCH_SSH_PORTS", "").split(",")
                 if "=" in p)
    if host in ports:
        ssh += ["-p", ports[host]]
    try:
        os.execvp(ssh[0], ssh + [host] + rest)
    except OSError as exc:
        sys.stderr.write("mxc-launch: cannot run the ssh command %r: %s\n" % (ssh[0], exc))
        return 127


# ---- the launcher ---------------------------------------------------------------------------

_VALUE_OPTS = {"-n", "--num-workers", "-s", "--num-servers", "-H", "--hostfile",
               "--sync-dst-dir", "--launcher", "--env-server", "--env-worker", "--env",
               "--mpiexec", "--ssh-command", "--mpi-args", "--kill-timeout", "--bind"}


def _split_argv(argv):
    """(launcher options, command): the command starts at the first word that is not an
    option or an option's value, or after ``--``."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return argv[:i], argv[i + 1:]
        if not a.startswith("-") or a == "-":
            return argv[:i], argv[i:]
        # "-n 2" and "--env X" take the next word; "-n2" and "--env=X" carry their value
        i += 2 if a in _VALUE_OPTS else 1
    return argv, []


def _parser():
    p = argparse.ArgumentParser(
        prog="mxc-launch", description="Launch a distributed job (MXNet's tools/launch.py "
        "over MPI). Options come first; the command starts at the first non-option word.")
    p.add_argument("-n", "--num-workers", required=True, type=int,
                   help="number of worker processes (ranks)")
    p.add_argument("-s", "--num-servers", type=int, default=None,
                   help="accepted for MXNet's command lines; mxc's KVStore needs no servers")
    p.add_argument("-H", "--hostfile", type=str, default=None,
                   help="hosts to run on (ssh: host[:port] per line; mpi: the MPI's format)")
    p.add_argument("--sync-dst-dir", type=str, default=None,
                   help="not supported: the hosts must share the working directory")
    p.add_argument("--launcher", type=str, default=None,
                   choices=["local", "ssh", "mpi", "sge", "yarn"],
                   help="local (default without -H), ssh (default with -H) or mpi")
    p.add_argument("--env-server", action="append", default=[],
                   help="NAME:VALUE for server processes (mxc starts none)")
    p.add_argument("--env-worker", action="append", default=[],
                   help="NAME:VALUE (comma-separated pairs) set for every worker")
    p.add_argument("--env", action="append", default=[],
                   help="NAME (pass this launcher's value) or NAME:VALUE / NAME=VALUE (set)")
    p.add_argument("--p3", action="store_true", default=False,
                   help="MXNet's P3 ps-lite van; no effect in mxc")
    p.add_argument("--mpiexec", type=str, default=None,
                   help="the mpiexec to use (default: MXC_LAUNCH_MPIEXEC, the one next to this "
                   "Python, the first on PATH); 'none' starts plain processes")
    p.add_argument("--ssh-command", type=str, default=None,
                   help="ssh command for --launcher ssh (default: MXC_LAUNCH_SSH or 'ssh')")
    p.add_argument("--mpi-args", type=str, default=None,
                   help="extra mpiexec arguments, one shell-quoted string "
                   "(default: MXC_LAUNCH_MPI_ARGS)")
    p.add_argument("--bind", choices=["auto", "none"], default=None,
                   help="local launcher: pin each rank to its own block of CPUs when there "
                   "are enough (auto, the default: MXC_LAUNCH_BIND) or not (none)")
    p.add_argument("--kill-timeout", type=float, default=None,
                   help="seconds from SIGTERM to SIGKILL when stopping ranks "
                   "(default: MXC_LAUNCH_KILL_TIMEOUT or 5)")
    return p


def _kill_timeout(value):
    if value is None:
        raw = os.environ.get("MXC_LAUNCH_KILL_TIMEOUT", "")
        try:
            value = float(raw) if raw else _DEFAULT_KILL_TIMEOUT
        except ValueError:
            raise SystemExit("mxc-launch: MXC_LAUNCH_KILL_TIMEOUT must be a number of "
                             "seconds, got %r" % raw)
    if value < 0:
        raise SystemExit("mxc-launch: the kill timeout must be >= 0, got %g" % value)
    return value


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def _env_items(values, option, allow_names):
    """Parse --env style values into [(name, value or None)]; comma-separated lists work."""
    out = []
    for raw in values:
        if re.fullmatch(r"%s(?:,%s)*,?" % (_NAME, _NAME), raw or "-"):
            pieces = raw.split(",")              # a list of names: NAME1,NAME2
        else:                                    # NAME:VALUE pairs; a value may hold commas
            pieces = re.split(r",(?=%s[:=])" % _NAME, raw) if raw else []
        for piece in pieces:
            if not piece:
                continue
            m = re.match(r"^(%s)(?:([:=])(.*))?$" % _NAME, piece, re.S)
            if not m:
                raise SystemExit("mxc-launch: %s %r: expected NAME:VALUE or NAME=VALUE%s"
                                 % (option, piece, " or NAME" if allow_names else ""))
            if m.group(2) is None:
                if not allow_names:
                    raise SystemExit("mxc-launch: %s %r: expected NAME:VALUE or NAME=VALUE"
                                     % (option, piece))
                out.append((m.group(1), None))
            else:
                out.append((m.group(1), m.group(3)))
    return out


def _find_mpiexec(choice):
    choice = choice or os.environ.get("MXC_LAUNCH_MPIEXEC", "")
    if choice:
        if choice.lower() == "none":
            return None
        path = shutil.which(choice)
        if path is None:
            raise SystemExit("mxc-launch: mpiexec %r not found" % choice)
        return path
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec") or shutil.which("mpirun")


def _mpi_flavor(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    text = out.decode("utf-8", "replace")
    if "HYDRA" in text or "Hydra" in text:
        return "hydra"
    if "Open MPI" in text or "OpenRTE" in text or "open-mpi" in text:
        return "openmpi"
    return "unknown"


def _read_ssh_hosts(path):
    """MXNet's ssh hostfile: ``host`` or ``host:port`` per line (blank lines and # comments
    skipped). Returns [(host, port or None)]."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise SystemExit("mxc-launch: cannot read the hostfile %r: %s" % (path, exc.strerror))
    hosts = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        host, _, port = line.partition(":")
        if port and not port.isdigit():
            raise SystemExit("mxc-launch: hostfile %r: %r is not host or host:port"
                             % (path, line))
        hosts.append((host, port or None))
    if not hosts:
        raise SystemExit("mxc-launch: the hostfile %r names no host" % path)
    return hosts


class _Launcher(object):
    def __init__(self, opts, cmd):
        self.opts = opts
        self.cmd = cmd
        self.n = opts.num_workers
        self.jobid = uuid.uuid4().hex[:16]
        self.grace = _kill_timeout(opts.kill_timeout)
        self.procs = []            # the process(es) this launcher started directly
        self.pumps = []
        self.exits = {}            # rank -> exit code reported by its supervisor
        self.first_bad = None      # (rank, code) of the first rank that ended non-zero
        self.signalled = None
        self.n_sigint = 0
        self.wake = threading.Event()
        self.lock = threading.Lock()
        self.tmpdir = None
        self.t_start = time.time()           # MPI leftovers newer than this are this job's
        self.out_lock = threading.Lock()

    # -- output ------------------------------------------------------------------------------
    def _emit(self, fd, line):
        if line.startswith(_MARK):
            m = re.match(rb"^%s (\S+) exit rank=(\d+) code=(\d+)" % re.escape(_MARK), line)
            if m and m.group(1).decode() == self.jobid:
                self._on_rank_exit(int(m.group(2)), int(m.group(3)))
                return
        with self.out_lock:
            _write_all(fd, line)

    def _on_rank_exit(self, rank, code):
        with self.lock:
            self.exits[rank] = code
            if code != 0 and self.first_bad is None:
                self.first_bad = (rank, code)
        self.wake.set()

    def _start_pump(self, pipe, fd):
        src = os.dup(pipe.fileno())
        pipe.close()
        t = threading.Thread(target=_pump, args=(src, lambda s: self._emit(fd, s)), daemon=True)
        t.start()
        self.pumps.append(t)

    def _note(self, msg):
        with self.out_lock:
            _write_all(2, ("mxc-launch: %s\n" % msg).encode())

    # -- environment ---------------------------------------------------------------------------
    def _base_env(self, launcher):
        opts = self.opts
        env = dict(os.environ)
        for name, value in _env_items(opts.env, "--env", True):
            if value is None:
                if name not in os.environ:
                    raise SystemExit("mxc-launch: --env %s: the variable is not set here" % name)
            else:
                env[name] = value
        for name, value in _env_items(opts.env_worker, "--env-worker", False):
            env[name] = value
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.pop("MXC_LAUNCH_CPUS", None)
        if launcher == "local":
            self._plan_cores(env)
        env.update({"DMLC_NUM_WORKER": str(self.n), "DMLC_NUM_SERVER": "0",
                    "DMLC_ROLE": "worker", "DMLC_JOB_CLUSTER": launcher,
                    "MXC_LAUNCH_JOB": self.jobid, "MXC_LAUNCH_SIZE": str(self.n),
                    "MXC_LAUNCH_KILL_TIMEOUT": repr(self.grace)})
        self.env_names = sorted(set(k for k in env if k.startswith(("DMLC_", "MXC_"))) |
                                set(n for n, _ in _env_items(opts.env, "--env", True)) |
                                set(n for n, _ in _env_items(opts.env_worker, "--env-worker",
                                                             False)) |
                                {"PYTHONUNBUFFERED", "OMP_NUM_THREADS"} & set(env))
        return env

    def _plan_cores(self, env):
        """The local ranks' CPU blocks (MXC_LAUNCH_CPUS) and default OMP_NUM_THREADS."""
        try:
            cpus = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = list(range(os.cpu_count() or 1))
        per = max(1, len(cpus) // self.n)
        env.setdefault("OMP_NUM_THREADS", str(per))
        bind = self.opts.bind or os.environ.get("MXC_LAUNCH_BIND", "") or "auto"
        if bind not in ("auto", "none"):
            raise SystemExit("mxc-launch: MXC_LAUNCH_BIND must be auto or none, got %r" % bind)
        if bind == "auto" and len(cpus) >= self.n and hasattr(os, "sched_setaffinity"):
            blocks = [cpus[i * per:(i + 1) * per] for i in range(self.n)]
            env["MXC_LAUNCH_CPUS"] = ";".join(",".join(map(str, b)) for b in blocks)

    # -- building the command ----------------------------------------------------------------
    def _rank_cmd(self):
        return [sys.executable, _THIS, "--_rank", self.jobid, "--"] + self.cmd

    def _mpi_cmd(self, launcher, mpiexec, env):
        opts = self.opts
        flavor = _mpi_flavor(mpiexec)
        extra = shlex.split(opts.mpi_args if opts.mpi_args is not None
                            else os.environ.get("MXC_LAUNCH_MPI_ARGS", ""))
        cmd = [mpiexec]
        if flavor == "openmpi":
            if os.geteuid() == 0:
                cmd += ["--allow-run-as-root"]
            cmd += ["--oversubscribe"]
            for name in self.env_names:
                cmd += ["-x", name]
        if launcher == "mpi":
            cmd += (["--hostfile", opts.hostfile] if flavor == "openmpi"
                    else ["-f", opts.hostfile])
        elif launcher == "ssh":
            hosts = _read_ssh_hosts(opts.hostfile)
            self.tmpdir = tempfile.mkdtemp(prefix="mxc-launch-")
            hostfile = os.path.join(self.tmpdir, "hosts")
            with open(hostfile, "w") as f:
                f.write("".join(h + "\n" for h, _ in hosts))
            shim = os.path.join(self.tmpdir, "ssh")
            with open(shim, "w") as f:
                f.write("#!/bin/sh\nexec %s %s --_ssh-shim \"$@\"\n"
                        % (shlex.quote(sys.executable), shlex.quote(_THIS)))
            os.chmod(shim, 0o755)
            env["MXC_LAUNCH_SSH"] = (opts.ssh_command if opts.ssh_command is not None
                                     else os.environ.get("MXC_LAUNCH_SSH", "") or "ssh")
            env["MXC_LAUNCH_SSH_PORTS"] = ",".join("%s=%s" % (h, p) for h, p in hosts if p)
            if flavor == "openmpi":
                cmd += ["--hostfile", hostfile, "--mca", "plm_rsh_agent", shim]
            else:
                cmd += ["-f", hostfile, "-launcher", "ssh", "-launcher-exec", shim]
        cmd += extra + ["-n", str(self.n)] + self._rank_cmd()
        return cmd

    # -- running -------------------------------------------------------------------------------
    def _popen(self, cmd, env):
        def setup():
            _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)   # the launcher died: stop the job
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True,
                                preexec_fn=setup)
        self.procs.append(proc)
        self._start_pump(proc.stdout, 1)
        self._start_pump(proc.stderr, 2)
        return proc

    def _on_signal(self, signum, frame):
        if signum == signal.SIGINT:
            self.n_sigint += 1
        if self.signalled is None:
            self.signalled = signum
        self.wake.set()

    def _signal_all(self, signum):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.kill(p.pid, signum)
                except ProcessLookupError:
                    pass

    def _sweep(self):
        """Kill every process on this machine that carries this job's id (a last resort for
        anything the supervisors could not stop)."""
        needle = b"MXC_LAUNCH_JOB=" + self.jobid.encode()
        me = os.getpid()
        killed = []
        try:
            names = os.listdir("/proc")
        except OSError:
            return killed
        for name in names:
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open("/proc/%s/environ" % name, "rb") as f:
                    environ = f.read()
            except OSError:
                continue
            if needle in environ.split(b"\0"):
                try:
                    os.kill(int(name), signal.SIGKILL)
                    killed.append(int(name))
                except (ProcessLookupError, PermissionError):
                    pass
        return killed

    def run(self):
        opts = self.opts
        launcher = opts.launcher or ("ssh" if opts.hostfile else "local")
        if launcher in ("sge", "yarn"):
            raise SystemExit("mxc-launch: the %s launcher of MXNet is not supported; use local, "
                             "mpi or ssh" % launcher)
        if launcher in ("ssh", "mpi") and not opts.hostfile:
            raise SystemExit("mxc-launch: --launcher %s needs a hostfile (-H)" % launcher)
        if self.n < 1:
            raise SystemExit("mxc-launch: -n must be at least 1, got %d" % self.n)
        if not self.cmd:
            raise SystemExit("mxc-launch: no command to run")
        if opts.sync_dst_dir:
            raise SystemExit("mxc-launch: --sync-dst-dir is not supported: make the working "
                             "directory available on every host (a shared file system)")
        if opts.num_servers:
            self._note("mxc's distributed KVStore runs without server processes; -s %d starts "
                       "none (every rank is a worker)" % opts.num_servers)
        if opts.env_server:
            self._note("--env-server has no effect: mxc starts no server processes")
        if opts.p3:
            self._note("--p3 has no effect in mxc (no ps-lite)")
        env = self._base_env(launcher)
        mpiexec = _find_mpiexec(opts.mpiexec)
        if mpiexec is None and launcher != "local":
            raise SystemExit("mxc-launch: --launcher %s needs mpiexec (install mxc's 'dist' "
                             "extra: mpi4py and the MPICH wheel)" % launcher)

        handlers = {}
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            try:
                handlers[sig] = signal.signal(sig, self._on_signal)
            except ValueError:       # not the main thread: no signal handling
                pass
        try:
            if mpiexec is None:
                self._note("no mpiexec found: starting %d plain processes; MPI programs in "
                           "them will not form one job (install mxc's 'dist' extra)" % self.n)
                for r in range(self.n):
                    renv = dict(env, MXC_LAUNCH_RANK=str(r), MXC_LAUNCH_LOCAL_RANK=str(r))
                    self._popen(self._rank_cmd(), renv)
            else:
                self._popen(self._mpi_cmd(launcher, mpiexec, env), env)
            return self._wait(launcher)
        finally:
            for sig, h in handlers.items():
                signal.signal(sig, h)
            if self.tmpdir:
                shutil.rmtree(self.tmpdir, ignore_errors=True)

    def _wait(self, launcher):
        stopping = None            # time the stop began
        forced = False
        while any(p.poll() is None for p in self.procs):
            self.wake.wait(0.1)
            self.wake.clear()
            now = time.monotonic()
            if stopping is None:
                # Ctrl-C reaches the ranks as SIGINT; any other stop as SIGTERM, sent as
                # SIGUSR1 (which hydra forwards to every rank without aborting the job) and
                # turned into SIGTERM of the rank's process group by its supervisor
                if self.signalled is not None:
                    stopping = now
                    self._signal_all(signal.SIGINT if self.signalled == signal.SIGINT
                                     else signal.SIGUSR1)
                elif self.first_bad is not None:
                    rank, code = self.first_bad
                    self._note("rank %d exited with status %d; stopping the other ranks"
                               % (rank, code))
                    stopping = now
                    self._signal_all(signal.SIGUSR1)
            elif not forced and (self.n_sigint > 1 or now - stopping > self.grace + 5.0):
                forced = True
                self._force_stop(launcher)
        if launcher == "local":
            self._sweep()
        if launcher in ("local", "mpi"):
            sweep_mpi_shm(self.t_start)
        for t in self.pumps:
            t.join(timeout=5.0)
        if self.signalled is not None:
            return 128 + int(self.signalled)
        if self.first_bad is not None:
            return self.first_bad[1]
        for p in self.procs:
            code = _exit_code(p.returncode)
            if code != 0:
                return code
        missing = sorted(set(range(self.n)) - set(self.exits))
        if missing and self.exits:
            self._note("rank(s) %s ended without reporting a status" % missing)
            return 1
        return 0

    def _force_stop(self, launcher):
        self._note("ranks still running %.0f s after the stop; killing them"
                   % (self.grace + 5.0))
        if any(p.poll() is None for p in self.procs) and len(self.procs) == 1:
            self._signal_all(signal.SIGINT)     # hydra: a second Ctrl-C aborts at once
            t = time.monotonic() + 2.0
            while self.procs[0].poll() is None and time.monotonic() < t:
                time.sleep(0.05)
        if launcher == "local":
            self._sweep()
        self._signal_all(signal.SIGKILL)


def sweep_mpi_shm(since, shm_dir="/dev/shm"):
    """Remove the shared-memory files of MPICH (``mpich_shm_*``) that ranks of a job which
    started at ``since`` (time.time()) left behind; return their names. MPICH removes them
    in MPI_Finalize, so a rank that was killed or aborted leaves its files, and /dev/shm is
    memory: 855 MB of them had piled up on a test machine. Only files of this user, changed
    since the job started and mapped by none of this user's processes are removed (another
    user's process cannot map them), so a job still running keeps its files."""
    prefix = "mpich_shm_"
    try:
        names = [n for n in os.listdir(shm_dir) if n.startswith(prefix)]
    except OSError:
        return []
    uid = os.getuid()
    cands = []
    for n in names:
        try:
            st = os.stat(os.path.join(shm_dir, n))
        except OSError:
            continue
        if st.st_uid == uid and max(st.st_mtime, st.st_ctime) >= since - 1.0:
            cands.append(n)
    if not cands:
        return []
    mapped = set()
    needle = os.path.join(shm_dir, prefix).encode()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []               # cannot tell what is in use: remove nothing
    for pid in pids:
        try:
            with open("/proc/%s/maps" % pid, "rb") as f:
                maps = f.read()
        except OSError:
            continue
        for line in maps.splitlines():
            at = line.find(needle)       # the path is the line's last field
            if at >= 0:
                name = os.path.basename(line[at:].split(b" ")[0])     # drop " (deleted)"
                mapped.add(name.decode("utf-8", "replace"))
    removed = []
    for n in cands:
        if n in mapped:
            continue
        try:
            os.unlink(os.path.join(shm_dir, n))
            removed.append(n)
        except OSError:
            pass
    return removed


def main(argv=None):
    """The ``mxc-launch`` command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--_rank"]:
        return _rank_main(argv[1:])
    if argv[:1] == ["--_ssh-shim"]:
        return _ssh_shim_main(argv[1:])
    head, cmd = _split_argv(argv)
    opts = _parser().parse_args(head)
    return _Launcher(opts, cmd).run()


if __name__ == "__main__":
    sys.exit(main())
