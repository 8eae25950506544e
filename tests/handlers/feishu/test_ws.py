"""The long connection: lark-oapi's real websocket client in its own thread, endpoint discovery replaced.

As lark-oapi's own tests do, the connection step is replaced: ``_get_conn_url``
(the HTTPS endpoint discovery) returns the address of a local websocket server,
which then plays Feishu: it pushes one ``im.message.receive_v1`` event as a
protobuf data frame and reads the client's acknowledgement frame.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import lark_oapi as lark
import pytest
import websockets
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from lark_oapi.ws.enum import FrameType
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from bot.app import Services
from bot.config import Settings
from bot.delivery.feishu import FeishuClient, FeishuDeliverer

from .conftest import fixture


class FeishuOnLoopback:
    """A websocket server on 127.0.0.1 that sends one event frame to whoever connects."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.acks: list[dict[str, Any]] = []
        self.port = 0
        self.connected = threading.Event()

    async def handler(self, socket: Any) -> None:
        self.connected.set()
        frame = Frame()
        for key, value in (("type", "event"), ("message_id", "m-1"), ("trace_id", "t-1"), ("sum", "1"), ("seq", "0")):
            header = frame.headers.add()
            header.key, header.value = key, value
        frame.service, frame.method, frame.SeqID, frame.LogID = 7, FrameType.DATA.value, 1, 1
        frame.payload = json.dumps(self.payload, ensure_ascii=False).encode()
        await socket.send(frame.SerializeToString())
        async for message in socket:
            answer = Frame()
            answer.ParseFromString(message)
            if answer.method == FrameType.DATA.value:
                self.acks.append(json.loads(answer.payload))


def _client_class(url: str) -> type[Any]:
    class LoopbackClient(lark.ws.Client):  # type: ignore[misc]
        def _get_conn_url(self) -> str:
            return url

    return LoopbackClient


async def test_long_connection_answers_an_event_and_stops_cleanly(
    fake_api: FakeFeishuAPI, client: FeishuClient, services: Services,
) -> None:
    from bot.handlers.feishu.app import FeishuBot, running

    feishu = FeishuOnLoopback(fixture("group_mention_text"))
    async with websockets.serve(feishu.handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        url = f"ws://127.0.0.1:{port}/ws?device_id=dev-1&service_id=7"
        bot = FeishuBot(deliverer=FeishuDeliverer(client), core=services.core, claims=services.claims)
        threads_before = set(threading.enumerate())
        async with running(bot, mode="ws", app_id=APP_ID, app_secret=APP_SECRET, domain=fake_api.base_url,
                           client_factory=_client_class(url)) as routes:
            assert routes == []
            for _ in range(200):
                if fake_api.replies() and feishu.acks:
                    break
                await asyncio.sleep(0.05)
        leftover = [t for t in threading.enumerate() if t not in threads_before and t.name == "feishu-ws"]
    assert feishu.connected.is_set()
    assert [a["code"] for a in feishu.acks] == [200]
    [reply] = fake_api.replies()
    assert reply.target == "om_text_0001"
    assert "PR #6046" in reply.content["header"]["title"]["content"]
    assert leftover == []


def test_missing_credentials_are_a_config_error(settings: Settings) -> None:
    from bot.app import serve
    from bot.errors import ConfigError

    no_app = settings.model_copy(update={"feishu_app_id": None, "feishu_app_secret": None})
    with pytest.raises(ConfigError, match="FEISHU_APP_ID"):  # refused before Redis or anything else is opened
        asyncio.run(serve(no_app, slack="off", feishu="ws", host="127.0.0.1", port=0))
