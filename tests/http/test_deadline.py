"""The deadline watchdog: one thread for every request's deadline, each expiring at its
own time, a cancelled one never, and sockets shut when theirs passes."""

from __future__ import annotations

import socket
import threading
import time

from auditor.http.deadline import Deadline


def _wait_for(condition, seconds: float = 10.0) -> bool:
    ends = time.monotonic() + seconds
    while not condition() and time.monotonic() < ends:
        time.sleep(0.005)
    return condition()


def test_deadlines_expire_in_their_own_order_whatever_order_they_came_in():
    later, sooner = Deadline(0.6), Deadline(0.1)
    assert _wait_for(lambda: sooner.expired, 5)
    assert not later.expired  # a deadline that came first, due later, waits its turn
    assert _wait_for(lambda: later.expired, 5)


def test_a_cancelled_deadline_never_expires_and_one_thread_serves_them_all():
    before = threading.active_count()
    deadlines = [Deadline(0.05 + n / 1000) for n in range(200)]
    assert threading.active_count() <= before + 1  # not a thread a request
    for deadline in deadlines[::2]:
        deadline.cancel()
    assert _wait_for(lambda: all(d.expired for d in deadlines[1::2]))
    time.sleep(0.1)
    assert not any(d.expired for d in deadlines[::2])


def test_an_expired_deadline_shuts_its_sockets_even_those_attached_late():
    left, right = socket.socketpair()
    late_left, late_right = socket.socketpair()
    try:
        deadline = Deadline(0.05)
        deadline.attach(left)
        assert _wait_for(lambda: deadline.expired)
        assert left.recv(1) == b""  # shut down: reads end at once
        deadline.attach(late_left)
        assert late_left.recv(1) == b""
    finally:
        for sock in (left, right, late_left, late_right):
            sock.close()


def test_many_cancelled_deadlines_do_not_pile_up():
    from auditor.http import deadline as module

    for _ in range(3 * module._Watchdog.SWEEP_AFTER):
        Deadline(3600).cancel()
    assert len(module._WATCHDOG._heap) <= 2 * module._Watchdog.SWEEP_AFTER
