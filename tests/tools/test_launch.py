"""mxc-launch (mxc/tools/launch.py): ranks as one MPI job, DMLC_* variables, rank-prefixed
output, exit statuses, and faults (a dying rank, signals to the launcher) with a time bound and
no process left behind (checked by scanning /proc for a tag only the job's processes carry).
The ssh launcher runs across two network namespaces joined by a veth pair when this process is
root and ``ip netns`` works (otherwise that test skips and says why)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

import mxc.tools.launch as launch

LAUNCH = launch.__file__

try:
    import mpi4py  # noqa: F401  (skip the MPI tests without it)
    _MPIEXEC = launch._find_mpiexec(None)
except ImportError:
    _MPIEXEC = None

needs_mpi = pytest.mark.skipif(_MPIEXEC is None,
                               reason="mpi4py or mpiexec missing (install mxc's 'dist' extra)")


def _env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("DMLC_", "MXC_LAUNCH_", "PMI_", "OMPI_")):
            del env[k]
    return env


def _tagged(tag):
    """PIDs of live processes whose environment carries MXC_TEST_TAG=tag."""
    needle = ("MXC_TEST_TAG=" + tag).encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/stat" % name, "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env and state != b"Z":
            found.append(int(name))
    return found


def _assert_none_left(tag, within=2.0):
    deadline = time.monotonic() + within
    while True:
        left = _tagged(tag)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:                     # never leave them to the next test
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, "processes left behind by the job: %s" % left


def _script(tmp_path, body, name="rank.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def _launch(args, timeout=60, **kw):
    return subprocess.run([sys.executable, LAUNCH] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=_env(), timeout=timeout, **kw)


# ---- command line ---------------------------------------------------------------------------

def test_split_argv_keeps_the_scripts_options():
    head, cmd = launch._split_argv(["-n", "2", "--env", "A=1", "-H", "h", "python", "x.py",
                                    "-n", "3", "--env", "B"])
    assert head == ["-n", "2", "--env", "A=1", "-H", "h"]
    assert cmd == ["python", "x.py", "-n", "3", "--env", "B"]
    assert launch._split_argv(["-n2", "--launcher=local", "--", "-x"]) == \
        (["-n2", "--launcher=local"], ["-x"])


def test_env_items():
    items = launch._env_items(["A=1,B:2", "X,Y", "U=tcp,self", "K:"], "--env", True)
    assert items == [("A", "1"), ("B", "2"), ("X", None), ("Y", None), ("U", "tcp,self"),
                     ("K", "")]
    with pytest.raises(SystemExit, match="NAME:VALUE"):
        launch._env_items(["1bad=2"], "--env", True)
    with pytest.raises(SystemExit, match="NAME:VALUE"):
        launch._env_items(["JUSTNAME"], "--env-worker", False)


def test_read_ssh_hosts(tmp_path):
    p = tmp_path / "hosts"
    p.write_text("# cluster\nnode1\n\nnode2:2222  \n")
    assert launch._read_ssh_hosts(str(p)) == [("node1", None), ("node2", "2222")]
    p.write_text("node1:abc\n")
    with pytest.raises(SystemExit, match="host:port"):
        launch._read_ssh_hosts(str(p))


def test_usage_errors(tmp_path):
    r = _launch(["-n", "2", "--launcher", "ssh", "python", "-c", "pass"])
    assert r.returncode != 0 and b"needs a hostfile" in r.stderr
    r = _launch(["-n", "2", "--launcher", "yarn", "python", "-c", "pass"])
    assert r.returncode != 0 and b"not supported" in r.stderr
    r = _launch(["-n", "2"])
    assert r.returncode != 0 and b"no command" in r.stderr


# ---- local jobs ------------------------------------------------------------------------------

RANK_INFO = """
    import os, sys
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    keys = ["DMLC_ROLE", "DMLC_WORKER_ID", "DMLC_TASK_ID", "DMLC_NUM_WORKER", "DMLC_NUM_SERVER",
            "MXC_LAUNCH_RANK", "MXC_LAUNCH_LOCAL_RANK", "PASSED", "SET1", "SET2", "WORKER"]
    print("info rank=%d size=%d %s" % (comm.Get_rank(), comm.Get_size(),
          " ".join("%s=%s" % (k, os.environ.get(k)) for k in keys)))
    print("to stderr from %d" % comm.Get_rank(), file=sys.stderr)
    print("sum=%d" % comm.allreduce(comm.Get_rank() + 1))
    sys.stdout.write("no newline at the end")
"""


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_local_ranks_env_and_prefixes(tmp_path, n):
    script = _script(tmp_path, RANK_INFO)
    tag = uuid.uuid4().hex
    env = _env()
    env["PASSED"] = "from-launcher"
    r = subprocess.run([sys.executable, LAUNCH, "-n", str(n), "--env", "PASSED",
                        "--env", "SET1:a:b", "--env", "SET2=x=y", "--env-worker", "WORKER:w",
                        "--env", "MXC_TEST_TAG=" + tag, sys.executable, script],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0, err
    lines = out.splitlines()
    assert lines and all(re.match(r"^\[\d+\] ", ln) for ln in lines), out
    infos = {}
    for ln in lines:
        m = re.match(r"^\[(\d+)\] info rank=(\d+) size=(\d+) (.*)$", ln)
        if m:
            assert m.group(1) == m.group(2)          # the prefix is the MPI rank
            assert int(m.group(3)) == n              # one COMM_WORLD of n ranks
            infos[int(m.group(1))] = dict(kv.split("=", 1) for kv in m.group(4).split())
    assert sorted(infos) == list(range(n))
    for rank, kv in infos.items():
        assert kv["DMLC_ROLE"] == "worker"
        assert kv["DMLC_WORKER_ID"] == kv["DMLC_TASK_ID"] == kv["MXC_LAUNCH_RANK"] == str(rank)
        assert kv["MXC_LAUNCH_LOCAL_RANK"] == str(rank)
        assert kv["DMLC_NUM_WORKER"] == str(n) and kv["DMLC_NUM_SERVER"] == "0"
        assert (kv["PASSED"], kv["SET1"], kv["SET2"], kv["WORKER"]) == \
            ("from-launcher", "a:b", "x=y", "w")
    total = n * (n + 1) // 2
    assert sorted(ln for ln in lines if "sum=" in ln) == \
        ["[%d] sum=%d" % (k, total) for k in range(n)]
    # a last line without a newline still comes out whole, with its prefix
    assert sorted(ln for ln in lines if "no newline" in ln) == \
        ["[%d] no newline at the end" % k for k in range(n)]
    assert sorted(err.splitlines()) == ["[%d] to stderr from %d" % (k, k) for k in range(n)]
    _assert_none_left(tag)


@needs_mpi
@pytest.mark.parametrize("how", ["mpi", "plain"])
def test_exit_status_is_the_first_failing_ranks(tmp_path, how):
    """Rank 1 fails with 7 while the others would run for a minute: the job ends with 7 at
    once, nothing left behind. An MPI rank that fails must leave without MPI_Finalize (which
    waits for the other ranks; mxc's KVStore exits so after an error); a script that does not
    use MPI just exits."""
    script = _script(tmp_path, """
        import os, sys, time
        if sys.argv[1] == "mpi":
            from mpi4py import MPI
            r = MPI.COMM_WORLD.Get_rank()
        else:
            r = int(os.environ["DMLC_WORKER_ID"])
        print("started", flush=True)
        if r == 1:
            time.sleep(0.3)
            if sys.argv[1] == "mpi":
                os._exit(7)
            sys.exit(7)
        time.sleep(60)
    """)
    tag = uuid.uuid4().hex
    t0 = time.monotonic()
    r = _launch(["-n", "3", "--env", "MXC_TEST_TAG=" + tag, sys.executable, script, how])
    took = time.monotonic() - t0
    assert r.returncode == 7, r.stderr.decode()
    assert b"rank 1 exited with status 7" in r.stderr
    assert took < 30, took
    _assert_none_left(tag)


@needs_mpi
def test_killed_rank_takes_the_job_down(tmp_path):
    """Rank 1 is killed (SIGKILL) while every rank has children, one of them in its own
    session and deaf to SIGTERM: the launcher exits 128+9 within 30 s and no process of the
    job survives."""
    script = _script(tmp_path, """
        import os, signal, subprocess, sys, time
        from mpi4py import MPI
        r = MPI.COMM_WORLD.Get_rank()
        subprocess.Popen([sys.executable, "-c", "import signal, time; "
                          "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"],
                         start_new_session=True)
        subprocess.Popen(["sleep", "300"])
        MPI.COMM_WORLD.Barrier()
        print("ready", flush=True)
        time.sleep(0.5)
        if r == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(120)
    """)
    tag = uuid.uuid4().hex
    t0 = time.monotonic()
    started = time.time()
    r = _launch(["-n", "4", "--kill-timeout", "2", "--env", "MXC_TEST_TAG=" + tag,
                 sys.executable, script])
    took = time.monotonic() - t0
    assert r.returncode == 128 + 9, (r.returncode, r.stderr.decode())
    assert took < 30, took
    _assert_none_left(tag)
    # the killed rank never reached MPI_Finalize: the launcher removed the shared-memory
    # files MPICH left (a second sweep finds none of this job's)
    assert launch.sweep_mpi_shm(started) == []


def test_sweep_mpi_shm_removes_only_unmapped_files_of_the_job(tmp_path):
    import mmap
    old = tmp_path / "mpich_shm_old_0"
    old.write_bytes(b"\0" * 4096)
    time.sleep(1.2)
    since = time.time()
    for name in ("mpich_shm_left_0", "mpich_shm_used_0", "other_file"):
        (tmp_path / name).write_bytes(b"\0" * 4096)
    with open(tmp_path / "mpich_shm_used_0", "r+b") as f:
        m = mmap.mmap(f.fileno(), 4096)         # a live job's file: mapped by a process
    try:
        assert launch.sweep_mpi_shm(since, str(tmp_path)) == ["mpich_shm_left_0"]
    finally:
        m.close()
    assert sorted(os.listdir(tmp_path)) == ["mpich_shm_old_0", "mpich_shm_used_0", "other_file"]
    assert launch.sweep_mpi_shm(since, str(tmp_path / "missing")) == []


@needs_mpi
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_launcher_stops_every_rank(tmp_path, sig):
    """Ctrl-C (SIGINT) or SIGTERM of the launcher: every rank stops, one that ignores the
    signal is killed after --kill-timeout, the launcher exits 128+signal."""
    script = _script(tmp_path, """
        import signal, subprocess, time
        from mpi4py import MPI
        r = MPI.COMM_WORLD.Get_rank()
        if r == 1:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        subprocess.Popen(["sleep", "300"])
        MPI.COMM_WORLD.Barrier()
        print("ready", flush=True)
        time.sleep(120)
    """)
    tag = uuid.uuid4().hex
    p = subprocess.Popen([sys.executable, LAUNCH, "-n", "2", "--kill-timeout", "1", "--env",
                          "MXC_TEST_TAG=" + tag, sys.executable, script],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                         start_new_session=True)
    try:
        seen = 0
        deadline = time.monotonic() + 40
        while seen < 2 and time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            seen += b"ready" in line
        assert seen == 2, "the ranks did not start"
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=40)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 128 + int(sig), err.decode()
    assert took < 30, took
    _assert_none_left(tag)


@needs_mpi
def test_main_entry_point(tmp_path, capfd):
    """``main(argv)`` (the ``mxc-launch`` console script and ``python -m mxc.tools.launch``)
    returns the job's status."""
    script = _script(tmp_path, """
        import sys
        from mpi4py import MPI
        print("size", MPI.COMM_WORLD.Get_size())
        sys.exit(4 if MPI.COMM_WORLD.Get_rank() == 0 else 0)
    """)
    assert launch.main(["-n", "2", sys.executable, script]) == 4
    out = capfd.readouterr().out
    assert sorted(out.splitlines()) == ["[0] size 2", "[1] size 2"]


def test_without_mpiexec_ranks_are_plain_processes(tmp_path):
    """--mpiexec none (what happens without MPI installed): the ranks still start with their
    variables and prefixes, and a failing one still sets the status."""
    script = _script(tmp_path, """
        import os, sys, time
        rank = os.environ["DMLC_WORKER_ID"]
        print("rank", rank, os.environ["DMLC_NUM_WORKER"], flush=True)
        open(os.path.join(sys.argv[1], "done" + rank), "w").close()
        if rank == "2":     # fail once every rank has printed
            t = time.monotonic() + 20
            while len([f for f in os.listdir(sys.argv[1]) if f.startswith("done")]) < 3:
                time.sleep(0.02)
                if time.monotonic() > t:
                    break
            sys.exit(3)
    """)
    r = _launch(["-n", "3", "--mpiexec", "none", sys.executable, script, str(tmp_path)])
    assert r.returncode == 3
    assert sorted(r.stdout.decode().splitlines()) == ["[%d] rank %d 3" % (k, k)
                                                      for k in range(3)]
    assert b"no mpiexec found" in r.stderr


def test_command_not_found():
    r = _launch(["-n", "2", "--mpiexec", "none", "mxc-no-such-command-xyz"])
    assert r.returncode == 127
    # whichever rank fails first stops the other, so only one rank's message is certain
    assert re.search(rb"\[[01]\] mxc-launch: cannot run mxc-no-such-command-xyz", r.stderr), r.stderr


# ---- ssh across two network namespaces --------------------------------------------------------

def _netns_unavailable():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not root: the two-host test needs network namespaces (CI runs it as root)"
    if shutil.which("ip") is None:
        return "the 'ip' command is missing (apt-get install -y iproute2)"
    probe = "mxcprobe%d" % os.getpid()
    r = subprocess.run(["ip", "netns", "add", probe], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if r.returncode != 0:
        return "'ip netns add' failed: %s" % r.stdout.decode().strip()
    subprocess.run(["ip", "netns", "del", probe])
    return None


@needs_mpi
def test_ssh_launcher_across_two_network_namespaces(tmp_path):
    why = _netns_unavailable()
    if why:
        pytest.skip(why)
    sfx = "%d" % (os.getpid() % 100000)
    ns_a, ns_b = "mxcla" + sfx, "mxclb" + sfx
    veth_a, veth_b = "mxva" + sfx, "mxvb" + sfx
    net = 200 + os.getpid() % 50
    ip_a, ip_b = "10.%d.7.1" % net, "10.%d.7.2" % net

    def ip(*args):
        subprocess.run(["ip"] + list(args), check=True)

    try:
        ip("netns", "add", ns_a)
        ip("netns", "add", ns_b)
        ip("link", "add", veth_a, "type", "veth", "peer", "name", veth_b)
        ip("link", "set", veth_a, "netns", ns_a)
        ip("link", "set", veth_b, "netns", ns_b)
        ip("-n", ns_a, "addr", "add", ip_a + "/24", "dev", veth_a)
        ip("-n", ns_b, "addr", "add", ip_b + "/24", "dev", veth_b)
        for ns, dev in ((ns_a, veth_a), (ns_b, veth_b)):
            ip("-n", ns, "link", "set", dev, "up")
            ip("-n", ns, "link", "set", "lo", "up")
        # the ssh stand-in: [-p PORT] HOST COMMAND -> COMMAND in HOST's namespace
        calls = tmp_path / "ssh-calls"
        stand_in = tmp_path / "netns-ssh"
        stand_in.write_text(textwrap.dedent("""\
            #!/bin/sh
            echo "$@" >> %s
            while [ "${1#-}" != "$1" ]; do [ "$1" = "-p" ] && shift; shift; done
            host=$1; shift
            case $host in %s) ns=%s;; %s) ns=%s;; *) echo "no host $host" >&2; exit 255;; esac
            exec ip netns exec $ns sh -c "$*"
            """ % (calls, ip_a, ns_a, ip_b, ns_b)))
        stand_in.chmod(0o755)
        hosts = tmp_path / "hosts"
        hosts.write_text("%s\n%s:2222\n" % (ip_a, ip_b))
        script = _script(tmp_path, """
            import os
            import numpy as np
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
            send = np.full(1 << 20, comm.Get_rank() + 1.0)
            recv = np.empty_like(send)
            comm.Allreduce(send, recv)
            print("rank", comm.Get_rank(), os.readlink("/proc/self/ns/net"),
                  os.environ["DMLC_NODE_HOST"], recv[0], recv[-1])
        """)

        def rx_bytes():
            out = subprocess.run(["ip", "-n", ns_a, "-s", "link", "show", veth_a],
                                 stdout=subprocess.PIPE, check=True).stdout.decode()
            return int(out.splitlines()[3].split()[0])

        before = rx_bytes()
        tag = uuid.uuid4().hex
        # the launcher runs on host A; hydra's proxies call back to A's address; MPI traffic
        # between the "hosts" goes over TCP (the veth), not shared memory
        r = subprocess.run(
            ["ip", "netns", "exec", ns_a, sys.executable, LAUNCH, "-n", "4", "-H", str(hosts),
             "--launcher", "ssh", "--ssh-command", str(stand_in),
             "--mpi-args", "-localhost %s" % ip_a, "--env", "UCX_TLS=tcp",
             "--env", "MPIR_CVAR_NOLOCAL=1", "--env", "MXC_TEST_TAG=" + tag,
             sys.executable, script],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), timeout=60)
        assert r.returncode == 0, r.stderr.decode()
        rows = {}
        for ln in r.stdout.decode().splitlines():
            m = re.match(r"^\[(\d)\] rank (\d) (\S+) (\S+) (\S+) (\S+)$", ln)
            assert m and m.group(1) == m.group(2), ln
            rows[int(m.group(1))] = m.groups()[2:]
        assert sorted(rows) == [0, 1, 2, 3]
        # ranks round-robin over the hosts (as MXNet's ssh launcher): 0, 2 on A; 1, 3 on B
        assert rows[0][0] == rows[2][0] != rows[1][0] == rows[3][0]
        assert [rows[k][1] for k in range(4)] == [ip_a, ip_b, ip_a, ip_b]
        assert all(float(v[2]) == float(v[3]) == 10.0 for v in rows.values())
        assert rx_bytes() - before > 4 * (1 << 20), "the allreduce did not cross the veth"
        # host B was reached through the ssh command, with the port of the hostfile (host A
        # is the launcher's own, which hydra starts without ssh)
        assert re.search(r"(^|\n)-p 2222 %s " % re.escape(ip_b), calls.read_text())
        _assert_none_left(tag)
    finally:
        for ns in (ns_a, ns_b):
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


_AFFINITY = """
    import os
    print("cpus", ",".join(map(str, sorted(os.sched_getaffinity(0)))),
          "omp", os.environ.get("OMP_NUM_THREADS"), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity here")
@pytest.mark.parametrize("bind", ["auto", "none", "env-none"])
def test_local_ranks_get_disjoint_cpu_blocks(tmp_path, bind):
    """Local ranks are pinned to disjoint blocks of the launcher's CPUs (len // n each) and
    OMP_NUM_THREADS defaults to the block size; --bind none / MXC_LAUNCH_BIND=none pin
    nothing. With fewer CPUs than ranks nothing is pinned either."""
    cpus = sorted(os.sched_getaffinity(0))
    n = 2
    script = _script(tmp_path, _AFFINITY)
    env = _env()
    env.pop("OMP_NUM_THREADS", None)
    args = [sys.executable, LAUNCH, "-n", str(n), "--mpiexec", "none"]
    if bind == "none":
        args += ["--bind", "none"]
    elif bind == "env-none":
        env["MXC_LAUNCH_BIND"] = "none"
    r = subprocess.run(args + [sys.executable, script], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    got = {}
    for ln in r.stdout.decode().splitlines():
        m = re.match(r"^\[(\d+)\] cpus (\S+) omp (\S+)$", ln)
        assert m, ln
        got[int(m.group(1))] = ([int(c) for c in m.group(2).split(",")], m.group(3))
    per = max(1, len(cpus) // n)
    assert sorted(got) == list(range(n))
    for rank, (mine, omp) in got.items():
        assert omp == str(per)
        if bind == "auto" and len(cpus) >= n:
            assert mine == cpus[rank * per:(rank + 1) * per]
        else:
            assert mine == cpus


def test_bind_value_is_checked(tmp_path):
    env = _env()
    env["MXC_LAUNCH_BIND"] = "cores"
    r = subprocess.run([sys.executable, LAUNCH, "-n", "1", "--mpiexec", "none", "true"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    assert r.returncode != 0 and b"MXC_LAUNCH_BIND must be auto or none" in r.stderr
