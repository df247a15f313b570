"""A watch stream cut into lines, whatever chunks the connection delivers it in: every non-blank line,
whole, in order, the last one too without its newline."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import StreamReader
from aiohttp.base_protocol import BaseProtocol
from hypothesis import given, settings
from hypothesis import strategies as st

from tenantctl.operator.kube.client import _lines

pytestmark = [pytest.mark.timeout(30)]  # a cut that never advances loops forever

LINES = st.lists(st.one_of(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
                           st.sampled_from([b"", b" ", b"\t \r", b'{"type":"ADDED"}'])), max_size=12)


async def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    loop = asyncio.get_running_loop()
    stream = StreamReader(BaseProtocol(loop), 2**24, loop=loop)  # high enough never to pause a transport
    at = 0
    for cut in sorted(cuts):
        stream.feed_data(data[at:cut])
        at = cut
    stream.feed_data(data[at:])
    stream.feed_eof()
    return [line async for line in _lines(stream)]


@settings(max_examples=300, deadline=None)
@given(lines=LINES, trailing_newline=st.booleans(), data=st.data())
def test_lines_come_whole_whatever_the_chunks(lines: list[bytes], trailing_newline: bool, data: st.DataObject) -> None:
    stream = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=8))
    assert asyncio.run(_cut(stream, cuts)) == [line for line in lines if line.strip()]


def test_a_long_line_in_many_chunks_is_one_line() -> None:
    event = b'{"object":{"data":"' + b"a" * (1 << 20) + b'"}}'
    stream = event + b"\n" + event
    assert asyncio.run(_cut(stream, list(range(0, len(stream), 65536)))) == [event, event]
