"""The owner's book of the site runners (auditor.fleet.runners.Runners) against a fake
Dask client: where sites go, what comes back, and what a lost worker hands back to be
sent again. The real runners on a real cluster are in test_fleet, test_gate_lost and
test_faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import auditor.fleet.runners as runners_module
from auditor.fleet.runners import Runners, SiteRunner


class _Future:
    """A Dask future of a runner (an actor) that started at once."""

    def __init__(self, actor: Any) -> None:
        self.status = "finished"
        self.actor = actor
        self.released = False

    def result(self, timeout: float | None = None) -> Any:
        return self.actor

    def release(self) -> None:
        self.released = True


class _Actor:
    """A runner's proxy: each call answers with what the test says, or raises it."""

    def __init__(self, address: str, said: dict[str, object]) -> None:
        self.address, self._said = address, said
        self.sites: list[str] = []

    def run(self, task: str, gate: object) -> Any:
        self.sites.append(task)
        answer = self._said.get(self.address, f"{task} done")

        async def answered() -> object:
            if isinstance(answer, BaseException):
                raise answer
            return answer

        return answered()


class _Loop:
    def add_callback(self, callback: Any, *args: Any) -> None:
        asyncio.run(callback(*args))  # at once, on this thread


class _Client:
    """What Runners asks of Dask: the workers, an actor started on one, the event loop."""

    def __init__(self, workers: dict[str, int]) -> None:
        self.workers = workers
        self.said: dict[str, object] = {}  # a worker's address: what its calls answer
        self.actors: dict[str, _Actor] = {}
        self.loop = _Loop()

    def nthreads(self) -> dict[str, int]:
        return dict(self.workers)

    def submit(self, cls: type, threads: int, **kwargs: Any) -> _Future:
        assert cls is SiteRunner and kwargs["actor"] and not kwargs["allow_other_workers"]
        (address,) = kwargs["workers"]
        self.actors[address] = _Actor(address, self.said)
        return _Future(self.actors[address])


def test_sites_go_to_the_runner_with_the_most_threads_free():
    client = _Client({"tcp://a": 2, "tcp://b": 3})
    runners = Runners(client)  # type: ignore[arg-type]
    assert runners.free() == 5
    calls = [runners.send(f"site{n}", None) for n in range(4)]  # type: ignore[arg-type]
    assert len(client.actors["tcp://a"].sites) == 2 and len(client.actors["tcp://b"].sites) == 2
    assert runners.free() == 1
    answered = runners.answers(0.1)
    assert sorted(c for c, _ in answered) == sorted(calls)
    assert {v for _, v in answered} == {f"site{n} done" for n in range(4)}
    assert runners.free() == 5 and runners.answers(0.01) == []


def test_a_runner_that_cannot_be_reached_gets_no_site_more_and_is_started_again():
    client = _Client({"tcp://a": 1, "tcp://b": 1})
    runners = Runners(client)  # type: ignore[arg-type]
    client.said["tcp://a"] = OSError("Unable to contact Actor's worker")
    first, second = runners.send("one", None), runners.send("two", None)  # type: ignore[arg-type]
    answers = dict(runners.answers(0.1))
    assert isinstance(answers[first], OSError) and answers[second] == "two done"
    assert runners.free() == 1  # only b's thread: a is not sent to any more
    assert runners.lost(now=True) == []  # nothing was left running on it
    assert runners.free() == 2  # a runner on a again, a new actor
    client.said.clear()
    assert runners.send("three", None) is not None  # type: ignore[arg-type]


def test_the_sites_of_a_worker_gone_are_handed_back_and_a_new_worker_gets_a_runner(
    monkeypatch,
):
    client = _Client({"tcp://a": 2, "tcp://b": 2})
    runners = Runners(client)  # type: ignore[arg-type]
    held: list[Any] = []
    monkeypatch.setattr(client.loop, "add_callback", lambda *args: held.append(args))
    calls = [runners.send(f"site{n}", None) for n in range(4)]  # type: ignore[arg-type]
    on_a = [
        c
        for c, n in zip(calls, range(4), strict=True)
        if f"site{n}" in client.actors["tcp://a"].sites
    ]
    assert len(on_a) == 2
    assert runners.lost() == []  # within LOOK_EVERY of the last look: not looked
    client.workers = {"tcp://b": 2, "tcp://c": 4}  # a died, c started in its place
    assert sorted(runners.lost(now=True)) == sorted(on_a)
    assert runners.free() == 4  # c's four threads; b's two are busy
    for args in held:  # the lost worker's calls answer late, or never: nothing of them
        asyncio.run(args[0](*args[1:]))
    assert len(runners.answers(0.1)) == 4
    assert runners.free() == 6


def test_a_runner_that_does_not_start_is_tried_again_at_a_later_look(monkeypatch):
    monkeypatch.setattr(runners_module, "_START_TIMEOUT", 0.01)
    client = _Client({"tcp://a": 2})
    broken = _Future(None)
    broken.result = lambda timeout=None: (_ for _ in ()).throw(TimeoutError("no worker"))  # type: ignore[method-assign]
    monkeypatch.setattr(client, "submit", lambda *args, **kwargs: broken)
    runners = Runners(client)  # type: ignore[arg-type]
    assert runners.free() == 0 and broken.released
    monkeypatch.undo()
    assert runners.lost(now=True) == [] and runners.free() == 2


def test_close_stops_every_runner_and_lets_it_go():
    client = _Client({"tcp://a": 1})
    closed: list[str] = []
    runners = Runners(client)  # type: ignore[arg-type]
    client.actors["tcp://a"].close = lambda: _Answered(closed.append("a"))  # type: ignore[attr-defined]
    runners.close()
    assert closed == ["a"] and runners.free() == 0


class _Answered:
    def __init__(self, value: object) -> None:
        self.value = value

    def result(self, timeout: float | None = None) -> object:
        return self.value


@pytest.mark.parametrize("threads", [1, 3])
def test_a_runner_runs_its_sites_in_threads_of_its_own(threads, monkeypatch):
    import threading

    seen: list[str] = []
    monkeypatch.setattr(
        runners_module,
        "run_on_worker",
        lambda task, gate: seen.append(threading.current_thread().name) or task,
    )
    runner = SiteRunner(threads)

    async def two() -> list[object]:
        return list(await asyncio.gather(runner.run("x", None), runner.run("y", None)))  # type: ignore[arg-type]

    assert asyncio.run(two()) == ["x", "y"]
    runner.close()
    assert all(name.startswith("auditor-site") for name in seen), seen
