"""The site runners (auditor.fleet.runners): the actor's own side run on an event loop,
and the owner's book against a fake Dask client whose actors answer on a real event
loop in a thread, as the client's do. The real runners on a real cluster are in
test_fleet, test_small_fleet, test_gate_lost and test_faults."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import auditor.fleet.runners as runners_module
from auditor.fleet.outcome import SiteFailure
from auditor.fleet.runners import Runners, SiteRunner


class _Loop:
    """The client's event loop: a real one, in a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def add_callback(self, callback: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(lambda: self.loop.create_task(callback(*args)))

    def stop(self) -> None:
        async def cancel_the_rest() -> None:
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(cancel_the_rest(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class _Actor:
    """A runner's proxy: a site started is done at once ("SITE done"), unless the test
    holds it; a call to a worker the test says is gone raises what it says."""

    def __init__(self, address: str, client: _Client) -> None:
        self.address, self._client = address, client
        self.sites: list[str] = []
        self.done: list[tuple[int, object]] = []
        self.hold = False
        self.starts = 0  # calls to start

    def _unreachable(self) -> None:
        error = self._client.said.get(self.address)
        if error is not None:
            raise error

    def start(self, sites: list[tuple[int, str]], gate: object) -> Any:
        self.starts += 1

        async def started() -> None:
            self._unreachable()
            for call, task in sites:
                self.sites.append(task)
                if not self.hold:
                    self.done.append((call, f"{task} done"))

        return started()

    def finished(self, wait: float) -> Any:
        async def finished() -> list[tuple[int, object]]:
            until = time.monotonic() + wait
            while not self.done and time.monotonic() < until:
                self._unreachable()
                await asyncio.sleep(0.005)
            self._unreachable()
            done, self.done = self.done, []
            return done

        return finished()

    def close(self) -> Any:
        self._client.closed.append(self.address)
        return _Answered(None)


class _Answered:
    def __init__(self, value: object) -> None:
        self.value = value

    def result(self, timeout: float | None = None) -> object:
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


class _Client:
    """What Runners asks of Dask: the workers, an actor started on one, the event loop."""

    def __init__(self, workers: dict[str, int]) -> None:
        self.workers = workers
        self.said: dict[str, BaseException] = {}  # a worker's address: what its calls raise
        self.actors: dict[str, _Actor] = {}
        self.closed: list[str] = []
        self.unstartable: set[str] = set()
        self.loop = _Loop()

    def nthreads(self) -> dict[str, int]:
        return dict(self.workers)

    def submit(self, cls: type, threads: int, **kwargs: Any) -> Any:
        assert cls is SiteRunner and kwargs["actor"] and not kwargs["allow_other_workers"]
        assert kwargs["pure"] is False  # a new runner, not the last fleet's closed one
        (address,) = kwargs["workers"]
        if address in self.unstartable:
            return _Started(TimeoutError("no worker"))
        self.actors[address] = _Actor(address, self)
        return _Started(self.actors[address])


class _Started(_Answered):
    """A runner's Dask future, started (or failed) at once."""

    status = "finished"

    def __init__(self, value: object) -> None:
        super().__init__(value)
        self.released = False

    def release(self) -> None:
        self.released = True


@pytest.fixture
def make_client() -> Iterator[Any]:
    made: list[_Client] = []

    def make(workers: dict[str, int]) -> _Client:
        made.append(_Client(workers))
        return made[-1]

    yield make
    for client in made:
        client.loop.stop()


def _all_back(runners: Runners, count: int) -> dict[int, object]:
    back: dict[int, object] = {}
    until = time.monotonic() + 10
    while len(back) < count and time.monotonic() < until:
        back.update(runners.answers(0.1))
    return back


def test_sites_go_to_the_runner_with_the_most_threads_free(make_client):
    client = make_client({"tcp://a": 2, "tcp://b": 3})
    runners = Runners(client)
    assert runners.free() == 5
    for actor in client.actors.values():
        actor.hold = True
    calls = runners.send([f"site{n}" for n in range(4)], None)  # type: ignore[arg-type]
    assert runners.free() == 1
    assert {a: actor.starts for a, actor in client.actors.items()} == {"tcp://a": 1, "tcp://b": 1}
    for actor in client.actors.values():
        actor.hold = False
        time.sleep(0.05)  # the starts reached the actors
        actor.done += [(c, f"{c} back") for c in calls if c not in {d for d, _ in actor.done}]
    sites = {a: len(actor.sites) for a, actor in client.actors.items()}
    assert sites == {"tcp://a": 2, "tcp://b": 2}
    back = _all_back(runners, 4)
    assert sorted(back) == sorted(calls)  # each once, though both runners said each
    assert runners.free() == 5 and runners.answers(0.01) == []


def test_a_runner_that_cannot_be_reached_gets_no_site_more_and_is_started_again(make_client):
    client = make_client({"tcp://a": 1, "tcp://b": 1})
    runners = Runners(client)
    client.said["tcp://a"] = OSError("Unable to contact Actor's worker")
    first, second = runners.send(["one", "two"], None)  # type: ignore[arg-type]
    back = _all_back(runners, 2)
    assert isinstance(back[first], OSError) and back[second] == "two done"
    assert runners.free() == 1  # only b's thread: a is not sent to any more
    client.said.clear()
    assert runners.lost() == []  # at once: a runner failed; nothing was left on it
    assert runners.free() == 2  # a runner on a again: a new actor
    (third,) = runners.send(["three"], None)  # type: ignore[arg-type]
    assert _all_back(runners, 1) == {third: "three done"}


def test_the_sites_of_a_worker_gone_are_handed_back_and_a_new_worker_gets_a_runner(
    make_client, monkeypatch
):
    client = make_client({"tcp://a": 2, "tcp://b": 2})
    runners = Runners(client)
    for actor in client.actors.values():
        actor.hold = True
    calls = runners.send([f"site{n}" for n in range(4)], None)  # type: ignore[arg-type]
    time.sleep(0.05)
    on_a = [c for n, c in enumerate(calls) if f"site{n}" in client.actors["tcp://a"].sites]
    assert len(on_a) == 2
    assert runners.lost() == []  # within LOOK_EVERY of the last look: not looked
    client.workers = {"tcp://b": 2, "tcp://c": 4}  # a died, c started in its place
    monkeypatch.setattr(runners_module, "LOOK_EVERY", 0.0)  # the next look is due
    assert sorted(runners.lost()) == sorted(on_a)
    assert runners.free() == 4  # c's four threads; b's two are busy
    client.actors["tcp://a"].done += [(c, "late") for c in on_a]  # nothing of them now
    on_b = [c for c in calls if c not in on_a]
    client.actors["tcp://b"].done += [(c, "back") for c in on_b]
    assert _all_back(runners, 2) == dict.fromkeys(on_b, "back")
    assert runners.answers(0.2) == [] and runners.free() == 6


@pytest.mark.parametrize("error", [OSError("connection closed"), KeyError("SiteRunner-1")])
def test_a_runner_whose_collecting_call_fails_hands_its_sites_back(make_client, error):
    """However the call that brings its sites back fails (its worker lost, or the actor
    gone from it), the runner is dropped and its sites are sent again, not left to hang."""
    client = make_client({"tcp://a": 2})
    runners = Runners(client)
    client.actors["tcp://a"].hold = True
    (call,) = runners.send(["site"], None)  # type: ignore[arg-type]
    time.sleep(0.05)
    client.said["tcp://a"] = error
    until = time.monotonic() + 10
    while runners.free() and time.monotonic() < until:
        assert runners.answers(0.05) == []
    assert runners.free() == 0
    assert runners.lost() == [call]  # at once, not LOOK_EVERY later


def test_a_runner_with_few_sites_left_hands_each_back_as_it_finishes(make_client, monkeypatch):
    """Gathering finished sites saves calls while a runner is busy; a small fleet, or a
    fleet's last sites, are not held back for it."""
    monkeypatch.setattr(runners_module, "_GATHER_FOR", 600.0)  # were it gathering: no answer
    client = make_client({"tcp://a": 4})
    runners = Runners(client)
    (first,) = runners.send(["one"], None)  # type: ignore[arg-type]
    assert _all_back(runners, 1) == {first: "one done"}
    (second,) = runners.send(["two"], None)  # type: ignore[arg-type]
    assert _all_back(runners, 1) == {second: "two done"}


def test_a_runner_that_does_not_start_is_tried_again_at_a_later_look(make_client, monkeypatch):
    client = make_client({"tcp://a": 2})
    client.unstartable.add("tcp://a")
    runners = Runners(client)
    assert runners.free() == 0
    client.unstartable.clear()
    monkeypatch.setattr(runners_module, "LOOK_EVERY", 0.0)  # the next look is due
    assert runners.lost() == [] and runners.free() == 2


def test_close_stops_every_runner(make_client):
    client = make_client({"tcp://a": 1, "tcp://b": 1})
    runners = Runners(client)
    runners.close()
    assert sorted(client.closed) == ["tcp://a", "tcp://b"] and runners.free() == 0


@pytest.mark.parametrize("threads", [1, 3])
def test_a_runner_runs_its_sites_in_threads_of_its_own_and_keeps_what_they_return(
    threads, monkeypatch
):
    seen: list[str] = []

    def run(task: Any, gate: object) -> object:
        seen.append(threading.current_thread().name)
        if task.site == "bad":
            raise RuntimeError("a bug")
        return task.site

    monkeypatch.setattr(runners_module, "run_on_worker", run)

    class Task:
        def __init__(self, site: str) -> None:
            self.site = site

    async def three() -> list[tuple[int, object]]:
        runner = SiteRunner(threads)
        await runner.start([(0, Task("x"))], None)  # type: ignore[list-item, arg-type]
        await runner.start([(1, Task("y")), (2, Task("bad"))], None)  # type: ignore[list-item, arg-type]
        done: list[tuple[int, object]] = []
        while len(done) < 3:
            done += await runner.finished(5.0)
        assert await runner.finished(0.01) == []
        runner.close()
        return done

    done = dict(asyncio.run(three()))
    assert done[0] == "x" and done[1] == "y"
    assert isinstance(done[2], SiteFailure) and done[2].detail == "RuntimeError: a bug"
    assert all(name.startswith("auditor-site") for name in seen), seen
