# SPDX-License-Identifier: MIT
"""libaccel through Python ctypes: the FFI smoke test (tests/lib/ffi-check).

Usage:
  python3 ffi_smoke.py LIBACCEL_SO   open device 0, create a buffer, fill it
                                     through a queue and through a task graph,
                                     check the bytes; exit 0 when verified
  python3 ffi_smoke.py --layout      print the structure layouts below
                                     (compared with the C compiler's)
  python3 ffi_smoke.py --modules     print the files of the standard library
                                     modules this test loads (shipped to the VM)

Only what libaccel.so exports is used: the packet builders, tensor views and
task builders are the exported twins of the headers' inline helpers
(lib/ffi.c). The structures are written from lib/include/accel/*.h and
uapi/drm/vaccel_accel.h: struct accel_task with its size field first,
struct accel_tensor with gen last.
"""
import ctypes as C
import os
import sys

# ---- the structures, as the headers define them ----

TENSOR_MAX_DIMS = 5
TASK_MAX_ARGS = 8


class Packet(C.Structure):		# struct drm_vaccel_packet
    _fields_ = [("header", C.c_uint16), ("arg", C.c_uint16), ("flags", C.c_uint32),
                ("operand", C.c_uint64 * 4), ("completion_addr", C.c_uint64),
                ("completion_value", C.c_uint64), ("completion_op", C.c_uint32),
                ("reserved", C.c_uint32)]


class Event(C.Structure):		# struct accel_event
    _fields_ = [("signal", C.c_void_p), ("value", C.c_uint64)]


class DeviceProps(C.Structure):		# struct accel_device_props
    _fields_ = [("size", C.c_uint32), ("id", C.c_uint32), ("engines", C.c_uint32),
                ("uapi_version", C.c_uint32), ("capabilities", C.c_uint64),
                ("memory_capacity", C.c_uint64), ("va_start", C.c_uint64),
                ("va_size", C.c_uint64), ("link_bandwidth_mbps", C.c_uint64),
                ("link_latency_ns", C.c_uint64), ("poll_budget_ns", C.c_uint64),
                ("max_buffers", C.c_uint32), ("max_mappings", C.c_uint32),
                ("max_queues", C.c_uint32), ("reserved", C.c_uint32)]


class Tensor(C.Structure):		# struct accel_tensor
    _fields_ = [("buf", C.c_void_p), ("offset", C.c_uint64), ("dtype", C.c_int),
                ("ndims", C.c_uint32), ("shape", C.c_uint64 * TENSOR_MAX_DIMS),
                ("strides", C.c_uint64 * TENSOR_MAX_DIMS), ("gen", C.c_uint64)]


class Arg(C.Structure):			# struct accel_arg
    _fields_ = [("t", C.POINTER(Tensor)), ("access", C.c_uint32)]


class _Fill(C.Structure):
    _fields_ = [("pattern", C.c_uint64)]


class _Reduce(C.Structure):
    _fields_ = [("op", C.c_uint32)]


class _Matmul(C.Structure):
    _fields_ = [("accumulate", C.c_uint32)]


class _Delay(C.Structure):
    _fields_ = [("ns", C.c_uint64)]


HOST_FN = C.CFUNCTYPE(None, C.c_void_p)


class _Host(C.Structure):
    _fields_ = [("fn", HOST_FN), ("arg", C.c_void_p)]


class _TaskOp(C.Union):
    _fields_ = [("fill", _Fill), ("reduce", _Reduce), ("matmul", _Matmul),
                ("delay", _Delay), ("host", _Host)]


class Task(C.Structure):		# struct accel_task
    _anonymous_ = ("u",)
    _fields_ = [("size", C.c_uint32), ("op", C.c_uint32), ("device", C.c_uint32),
                ("queue", C.c_uint32), ("nargs", C.c_uint32), ("args", Arg * TASK_MAX_ARGS),
                ("name", C.c_char_p), ("u", _TaskOp)]


class TgParams(C.Structure):		# struct accel_tg_params
    _fields_ = [("size", C.c_uint32), ("queues_per_device", C.c_uint32),
                ("ring_size", C.c_uint32), ("flags", C.c_uint32), ("heap_size", C.c_uint64),
                ("timeout_ns", C.c_int64)]


LAYOUTS = [("accel_event", Event), ("accel_device_props", DeviceProps),
           ("accel_tensor", Tensor), ("accel_arg", Arg), ("accel_task", Task),
           ("accel_tg_params", TgParams), ("drm_vaccel_packet", Packet)]

# constants of the headers
ACCEL_FOREVER = -1
ACCEL_BUFFER_HOST = 1 << 1
ACCEL_DTYPE_U32 = 6
ACCEL_OUTPUT = 1
ACCEL_DEVICE_PROPS_SIZE_1_0 = 88


def print_layout():
    for name, cls in LAYOUTS:
        print(f"{name} {C.sizeof(cls)}")
        for fname, _ in cls._fields_:
            f = getattr(cls, fname)
            if fname == "u":		# the anonymous union of accel_task
                print(f"{name}.fill {f.offset} {f.size}")
                continue
            print(f"{name}.{fname} {f.offset} {f.size}")


def print_modules():
    std = os.path.dirname(os.__file__)
    import struct			# noqa: F401  (ctypes loads it; make sure of it)
    for m in sorted(sys.modules.values(), key=lambda m: getattr(m, "__name__", "")):
        f = getattr(m, "__file__", None)
        if f and os.path.abspath(f).startswith(std + os.sep):
            print(os.path.relpath(os.path.abspath(f), std))


# ---- the library ----

def load(path):
    lib = C.CDLL(path)
    vp, i, u32, u64, i64 = C.c_void_p, C.c_int, C.c_uint32, C.c_uint64, C.c_int64
    sig = {
        "accel_version_major": (i, []),
        "accel_strerror": (C.c_char_p, [i]),
        "accel_device_open": (i, [C.c_uint, C.POINTER(vp)]),
        "accel_device_close": (None, [vp]),
        "accel_device_query": (i, [vp, C.POINTER(DeviceProps)]),
        "accel_buffer_create": (i, [vp, u64, u32, C.POINTER(vp)]),
        "accel_buffer_va": (u64, [vp]),
        "accel_buffer_host": (vp, [vp]),
        "accel_queue_create": (i, [vp, vp, C.POINTER(vp)]),
        "accel_queue_get_packet": (C.POINTER(Packet), [vp]),
        "accel_queue_record": (i, [vp, C.POINTER(Event)]),
        "accel_queue_submit": (i, [vp]),
        "accel_event_wait": (i, [C.POINTER(Event), i64]),
        "accel_prep_fill": (None, [C.POINTER(Packet), u64, u64, u64, C.c_uint]),
        "accel_tg_create": (i, [C.POINTER(vp), C.c_uint, C.POINTER(TgParams), C.POINTER(vp)]),
        "accel_tg_destroy": (None, [vp]),
        "accel_tg_submit": (i, [vp, C.POINTER(Task), C.POINTER(u64)]),
        "accel_tg_sync": (i, [vp, i64]),
        "accel_tensor_init": (i, [C.POINTER(Tensor), vp, u64, i, u32, C.POINTER(u64)]),
        "accel_tensor_slice": (i, [C.POINTER(Tensor), u32, u64, u64, u64]),
        "accel_task_prep_fill": (None, [C.POINTER(Task), C.POINTER(Tensor), u32, u64]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)		# AttributeError: not exported
        fn.restype = res
        fn.argtypes = args
    return lib


class Failed(Exception):
    pass


def check(lib, what, ret):
    if ret < 0:
        raise Failed(f"{what}: {ret} ({lib.accel_strerror(ret).decode()})")
    return ret


def smoke(path):
    lib = load(path)
    if lib.accel_version_major() != 1:
        raise Failed(f"libaccel major version {lib.accel_version_major()}, expected 1")
    size = 1 << 16
    dev, buf, q, tg = C.c_void_p(), C.c_void_p(), C.c_void_p(), C.c_void_p()
    check(lib, "accel_device_open", lib.accel_device_open(0, C.byref(dev)))
    try:
        props = DeviceProps(size=C.sizeof(DeviceProps))
        check(lib, "accel_device_query", lib.accel_device_query(dev, C.byref(props)))
        if props.engines < 1 or props.uapi_version < 3:
            raise Failed(f"device props: {props.engines} engines, uAPI {props.uapi_version}")
        check(lib, "accel_buffer_create",
              lib.accel_buffer_create(dev, size, ACCEL_BUFFER_HOST, C.byref(buf)))
        va, host = lib.accel_buffer_va(buf), lib.accel_buffer_host(buf)
        if not host:
            raise Failed("accel_buffer_host: NULL for an ACCEL_BUFFER_HOST buffer")

        # 1. through a queue: one FILL packet and an event, one doorbell
        check(lib, "accel_queue_create", lib.accel_queue_create(dev, None, C.byref(q)))
        pkt = lib.accel_queue_get_packet(q)
        if not pkt:
            raise Failed("accel_queue_get_packet: NULL")
        lib.accel_prep_fill(pkt, va, size, 0x5a, 1)
        ev = Event()
        check(lib, "accel_queue_record", lib.accel_queue_record(q, C.byref(ev)))
        check(lib, "accel_queue_submit", lib.accel_queue_submit(q))
        check(lib, "accel_event_wait", lib.accel_event_wait(C.byref(ev), 10 * 10**9))
        got = C.string_at(host, size)
        if got != b"\x5a" * size:
            raise Failed(f"queue FILL: byte {next(i for i, b in enumerate(got) if b != 0x5a)} "
                         "differs")

        # 2. through a task graph: a 2-D u32 view at offset 4096, and a
        #    strided tile of it (columns 4..7), as two FILL tasks
        devs = (C.c_void_p * 1)(dev)
        check(lib, "accel_tg_create", lib.accel_tg_create(devs, 1, None, C.byref(tg)))
        # the exported accel_tensor_init() writes the C structure: a canary
        # after the Python one shows a Python structure that is too small
        raw = (C.c_uint8 * (C.sizeof(Tensor) + 64))(*([0xee] * (C.sizeof(Tensor) + 64)))
        t = Tensor.from_buffer(raw)
        rows, cols, off = 8, 16, 4096
        shape = (C.c_uint64 * 2)(rows, cols)
        check(lib, "accel_tensor_init",
              lib.accel_tensor_init(C.byref(t), buf, off, ACCEL_DTYPE_U32, 2, shape))
        if bytes(raw[C.sizeof(Tensor):]) != b"\xee" * 64:
            raise Failed("accel_tensor_init wrote past the Python struct accel_tensor")
        if (t.offset, t.ndims, t.strides[0], t.strides[1], t.gen) != (off, 2, cols, 1, 0):
            raise Failed("accel_tensor_init: unexpected view")
        task = Task()
        lib.accel_task_prep_fill(C.byref(task), C.byref(t), ACCEL_OUTPUT, 0xdeadbeef)
        if task.size != C.sizeof(Task):
            raise Failed(f"accel_task_init() set size {task.size}, the Python struct "
                         f"accel_task has {C.sizeof(Task)}")
        tid = C.c_uint64()
        check(lib, "accel_tg_submit (fill)", lib.accel_tg_submit(tg, C.byref(task), C.byref(tid)))
        tile = Tensor.from_buffer_copy(t)
        check(lib, "accel_tensor_slice", lib.accel_tensor_slice(C.byref(tile), 1, 4, 4, 1))
        lib.accel_task_prep_fill(C.byref(task), C.byref(tile), ACCEL_OUTPUT, 0x11223344)
        check(lib, "accel_tg_submit (tile)", lib.accel_tg_submit(tg, C.byref(task), None))
        check(lib, "accel_tg_sync", lib.accel_tg_sync(tg, 10 * 10**9))
        got = C.string_at(host, size)
        want = bytearray(b"\x5a" * size)
        for r in range(rows):
            for c in range(cols):
                v = 0x11223344 if 4 <= c < 8 else 0xdeadbeef
                at = off + (r * cols + c) * 4
                want[at:at + 4] = v.to_bytes(4, "little")
        if got != bytes(want):
            bad = next(i for i in range(size) if got[i] != want[i])
            raise Failed(f"task graph FILL: byte {bad} is {got[bad]:#x}, expected {want[bad]:#x}")
        print(f"ffi_smoke: device {props.id} ({props.engines} engines): a queue FILL of {size} "
              f"bytes and two task-graph FILLs ({rows}x{cols} u32 and a 4-column tile) "
              "through Python ctypes: verified")
    finally:
        lib.accel_tg_destroy(tg)
        lib.accel_device_close(dev)


def main():
    if sys.argv[1:] == ["--layout"]:
        print_layout()
        return 0
    if sys.argv[1:] == ["--modules"]:
        print_modules()
        return 0
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        smoke(sys.argv[1])
    except (Failed, AttributeError, OSError) as e:
        print(f"ffi_smoke: FAILED: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
