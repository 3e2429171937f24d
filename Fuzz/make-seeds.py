#!/usr/bin/env python3
"""Writes the seed corpora in Fuzz/Corpus (except DeviceAuthFuzzer's: DeviceAuthFuzzer/make-fixture.py).

Seeds: the payloads and TXT records captured from real devices (../shared/real-messages, or the
directory given as the first argument), plus hostile shapes: bad frame lengths (0, 65537,
0xFFFFFFFF), truncated protobuf, invalid CastMessages, deep nesting, wrong JSON types, and one
valid request per castd.v1 method (encoded with protoc). Run from the repository root; the output
is committed.
"""
import json, os, struct, subprocess, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
real = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "..", "shared", "real-messages")
corpus = os.path.join(root, "Fuzz", "Corpus")

def write(target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def records(name):
    with open(os.path.join(real, name + ".jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)

def field(number, value):
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value

def cast_message(namespace, utf8=None, binary=None, source="receiver-0", destination="sender-0", payload_type=None):
    m = field(1, 0) + field(2, source) + field(3, destination) + field(4, namespace)
    m += field(5, payload_type if payload_type is not None else (0 if binary is None else 1))
    if utf8 is not None:
        m += field(6, utf8)
    if binary is not None:
        m += field(7, binary)
    return m

def frame(body):
    return struct.pack(">I", len(body)) + body

# --- JSON payloads: CastPayloadFuzzer takes them as they are, CastFrameFuzzer inside a frame
payloads = []
for name in ["receiver_status", "media_status", "errors", "app_availability", "connection", "other", "sender_requests"]:
    for i, r in enumerate(records(name)):
        payloads.append((f"real-{name}-{i}", r["namespace"], json.dumps(r["payload"], separators=(",", ":"))))

hostile = {
    "deep-arrays": "[" * 10000 + "]" * 10000,
    "deep-objects": '{"a":' * 10000 + "1" + "}" * 10000,
    "deep-status": '{"type":"MEDIA_STATUS","status":' + "[" * 600 + "]" * 600 + "}",
    "receiver-status-string": '{"type":"RECEIVER_STATUS","requestId":"7","status":"idle"}',
    "receiver-apps-object": '{"type":"RECEIVER_STATUS","status":{"applications":{"appId":1},"volume":[1,2]}}',
    "receiver-volume-strings": '{"type":"RECEIVER_STATUS","status":{"applications":[{"appId":"CC1AD845","sessionId":5,"namespaces":["a",{"name":3}],"isIdleScreen":"yes"}],"volume":{"level":"nan","muted":"1","stepInterval":"inf"}}}',
    "media-status-object": '{"type":"MEDIA_STATUS","status":{"mediaSessionId":"12","playerState":5,"currentTime":"abc","playbackRate":"inf","media":"x"}}',
    "media-status-numbers": '{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1e300,"currentTime":-1e308,"supportedMediaCommands":-5,"volume":{"level":1e308},"items":[{"itemId":"2","media":{"duration":"NaN"}}],"videoInfo":{"width":-1,"height":4294967296},"breakStatus":{"whenSkippable":"-inf"}}]}',
    "media-status-nulls": '{"type":"MEDIA_STATUS","requestId":null,"status":[null,{"mediaSessionId":null},{"mediaSessionId":3,"media":null,"items":null}]}',
    "multizone-wrong-types": '{"type":"MULTIZONE_STATUS","status":{"devices":[{"deviceId":7,"name":["x"],"capabilities":"-3"},{"deviceId":""},"str"]}}',
    "multizone-device-added": '{"type":"DEVICE_ADDED","device":{"deviceId":"abc","capabilities":1e20}}',
    "error-extended": '{"type":"LAUNCH_ERROR","extendedError":{"reason":7},"customData":{"a":[1,2]}}',
    "media-status-enums": '{"type":"MEDIA_STATUS","status":[{"mediaSessionId":1,"media":{"contentId":"x","metadata":{"metadataType":1099511627776}},"items":[{"itemId":2,"media":{"contentId":"y","metadata":{"metadataType":-2147483649}}},{"itemId":3,"media":{"contentId":"z","metadata":{"metadataType":2147483648}}}]}]}',
    "big-numbers": '[1e308,-1e308,1e-320,123456789012345678901234567890,-0.0,9007199254740993]',
    "escapes": '{"s":"\\u0000\\ud83d\\ude00\\\\\\"\\n\\u2028"}',
    "lone-surrogate": '{"s":"\\ud800"}',
    "duplicate-keys": '{"type":"A","type":"RECEIVER_STATUS"}',
    "eureka-info": '{"name":"Den TV","device_info":{"manufacturer":"Google Inc.","model_name":"Chromecast","ssdp_udn":"5d1a2f9c-8b3e-4f21-a0c4-9e7b6d5c4a3b"},"build_info":{"cast_build_revision":"1.56.500000"}}',
    "eureka-info-old-wrong-types": '{"name":7,"ssdp_udn":"uuid:5D1A2F9C8B3E4F21A0C49E7B6D5C4A3","build_version":["x"],"detail":{"model_name":"' + "m" * 300 + '","manufacturer":" "}}',
    "not-json": "{\"type\":",
    "empty": "",
}
for name, text in hostile.items():
    payloads.append(("hostile-" + name, "urn:x-cast:com.google.cast.media", text))

for name, namespace, text in payloads:
    write("CastPayloadFuzzer", name + ".json", text)
    if len(text) < 60000:
        write("CastFrameFuzzer", name, frame(cast_message(namespace, utf8=text)))

# --- frames
receiver = "urn:x-cast:com.google.cast.receiver"
ok = cast_message(receiver, utf8='{"type":"GET_STATUS","requestId":1}')
frames = {
    "length-0": struct.pack(">I", 0),
    "length-65537": struct.pack(">I", 65537) + b"\x08" * 16,
    "length-ffffffff": struct.pack(">I", 0xFFFFFFFF) + b"\x08\x00",
    "length-65536-incomplete": struct.pack(">I", 65536) + ok,
    "header-only-3-bytes": b"\x00\x00\x01",
    "truncated-protobuf": frame(ok[: len(ok) // 2]),
    "truncated-varint": frame(b"\x08\x80\x80\x80"),
    "garbage": frame(b"\xff" * 32),
    "two-frames": frame(ok) + frame(cast_message("urn:x-cast:com.google.cast.tp.heartbeat", utf8='{"type":"PING"}')),
    "empty-source": frame(cast_message(receiver, utf8="{}", source="")),
    "empty-destination": frame(cast_message(receiver, utf8="{}", destination="")),
    "empty-namespace": frame(cast_message("", utf8="{}")),
    "string-type-binary-payload": frame(cast_message(receiver, binary=b"\x00\x01", payload_type=0)),
    "binary-type-string-payload": frame(cast_message(receiver, utf8="{}", payload_type=1)),
    "both-payloads": frame(cast_message(receiver, utf8="{}", binary=b"x")),
    "binary-on-json-namespace": frame(cast_message(receiver, binary=b'{"type":"RECEIVER_STATUS"}')),
    "missing-required": frame(field(2, "a") + field(3, "b")),
    "unknown-fields": frame(ok + field(99, "extra") + field(8, 1)),
    "bad-utf8": frame(cast_message(receiver, utf8=b"\xc3\x28".decode("latin-1"))[:-2] + b"\xc3\x28"),
    "device-auth-binary": frame(cast_message("urn:x-cast:com.google.cast.tp.deviceauth", binary=b"\x12\x00")),
}
for name, data in frames.items():
    write("CastFrameFuzzer", name, data)

# --- castd.v1 requests: mode byte (method number) + request, and whole frames
methods = ["ListDevices", "GetStatus", "GetAppAvailability", "StartSession", "EndSession", "Load", "Play", "Pause",
           "Stop", "Seek", "SetPlaybackRate", "EditTracks", "SetStreamVolume", "SkipAd", "RequestMediaStatus",
           "QueueLoad", "QueueInsert", "QueueRemove", "QueueReorder", "QueueUpdate", "SetVolume", "SendMessage",
           "Listen", "Watch", "GetLogFilter", "SetLogFilter", "StreamLogs", "ForgetDevice"]
media = ('media { content_url: "https://example.com/a.mp4" content_type: "video/mp4" duration: 60 '
         'metadata { title: "T" images { url: "https://example.com/p.jpg" } } '
         'tracks { track_id: 1 type: TRACK_TYPE_TEXT content_id: "https://example.com/en.vtt" } '
         'break_clips { id: "c1" content_url: "https://example.com/ad.mp4" duration: 5 } '
         'breaks { id: "b1" position: 0 break_clip_ids: "c1" } custom_data_json: "{\\"k\\":[1]}" }')
requests = {
    "ListDevices": 'app_ids: "CC1AD845" capabilities: 1',
    "GetAppAvailability": 'device: "TV" app_ids: "CC1AD845" app_ids: "233637DE"',
    "StartSession": 'device: "TV" app_id: "CC1AD845" launch { language: "en-US" credentials: "c" }',
    "EndSession": 'device: "TV" stop_app: true',
    "Load": 'device: "TV" ' + media + ' start_time: 10 playback_rate: 1.5 active_track_ids: 1 custom_data_json: "{}"',
    "Play": 'device: "TV"',
    "Seek": 'position: 12.5 relative: true resume_state: RESUME_STATE_PLAY',
    "SetPlaybackRate": 'rate: 0.5',
    "EditTracks": 'active_tracks { track_ids: 1 } text_track_style { foreground_color: "#FFFF00FF" font_scale: 1.5 }',
    "SetStreamVolume": 'level: 0.5 muted: false',
    "QueueLoad": 'items { ' + media + ' start_time: 1 } items { ' + media + ' } start_index: 1 repeat_mode: REPEAT_MODE_ALL',
    "QueueInsert": 'items { ' + media + ' } insert_before_item_id: 3 play_now: true',
    "QueueRemove": 'item_ids: 1 item_ids: 2',
    "QueueReorder": 'item_ids: 2 insert_before_item_id: 1',
    "QueueUpdate": 'current_item_id: 2 repeat_mode: REPEAT_MODE_SINGLE items { item_id: 3 ' + media + ' }',
    "SetVolume": 'steps: -3',
    "SendMessage": 'namespace: "urn:x-cast:com.example.game" json: "{\\"type\\":\\"MOVE\\",\\"x\\":[1,2,{}]}"',
    "Listen": 'namespace: "urn:x-cast:com.example.game"',
    "SetLogFilter": 'filter: "CastChannel*=verbose"',
}
proto = os.path.join(root, "protos")
def encode(message, text):
    return subprocess.run(["protoc", "-I", proto, "--encode=castd.v1." + message, "castd/v1/cast.proto"],
                          input=text.encode(), check=True, capture_output=True).stdout

request_types = {"ListDevices": "ListDevicesRequest", "GetAppAvailability": "AppAvailabilityRequest",
                 "StartSession": "StartSessionRequest", "EndSession": "EndSessionRequest", "Load": "LoadRequest",
                 "Play": "MediaRequest", "Seek": "SeekRequest", "SetPlaybackRate": "SetPlaybackRateRequest",
                 "EditTracks": "EditTracksRequest", "SetStreamVolume": "SetVolumeRequest",
                 "QueueLoad": "QueueLoadRequest", "QueueInsert": "QueueInsertRequest", "QueueRemove": "QueueRemoveRequest",
                 "QueueReorder": "QueueReorderRequest", "QueueUpdate": "QueueUpdateRequest", "SetVolume": "SetVolumeRequest",
                 "SendMessage": "SendMessageRequest", "Listen": "ListenRequest", "SetLogFilter": "SetLogFilterRequest"}
def call_frame(call_id, method, request, timeout=0):
    start = field(1, "/castd.v1.Cast/" + method) + field(2, request) + (field(3, timeout) if timeout else b"")
    return field(1, call_id) + field(2, start)

stream = b""
for method, text in requests.items():
    try:
        request = encode(request_types[method], text)
    except subprocess.CalledProcessError as e:
        if method == "SetLogFilter":
            continue
        raise
    write("CastdRequestFuzzer", "request-" + method, bytes([methods.index(method)]) + request)
    stream += frame(call_frame(len(stream) % 1000 + 1, method, request, timeout=5000))
write("CastdRequestFuzzer", "frames-all-methods", b"\x80" + stream)
write("CastdRequestFuzzer", "frame-unknown-method", b"\x80" + frame(call_frame(1, "Nope", b"")))
write("CastdRequestFuzzer", "frame-call-0", b"\x80" + frame(call_frame(0, "GetStatus", b"")))
write("CastdRequestFuzzer", "frame-cancel", b"\x80" + frame(field(1, 3) + field(5, b"")))
write("CastdRequestFuzzer", "frame-length-0", b"\x80" + struct.pack(">I", 0))
write("CastdRequestFuzzer", "frame-length-4MiB-plus-1", b"\x80" + struct.pack(">I", 4 * 1024 * 1024 + 1))
write("CastdRequestFuzzer", "frame-length-ffffffff", b"\x80" + struct.pack(">I", 0xFFFFFFFF))
write("CastdRequestFuzzer", "frame-truncated", b"\x80" + frame(call_frame(1, "Load", b"\x12\x40\x0a")))
write("CastdRequestFuzzer", "request-load-garbage", bytes([methods.index("Load")]) + b"\xff" * 16)
write("CastdRequestFuzzer", "request-load-deep-json", bytes([methods.index("Load")]) + encode(
    "LoadRequest", 'media { content_id: "x" } custom_data_json: "' + "[" * 3000 + "]" * 3000 + '"'))
write("CastdRequestFuzzer", "request-volume-nan", bytes([methods.index("SetVolume")]) + field(2, b"") [:0] + b"\x11" + struct.pack("<d", float("nan")))

# --- TXT records: RDATA as on the wire
def txt_wire(entries):
    return b"".join(bytes([len(e)]) + e for e in entries)
for i, r in enumerate(records("txt_records")):
    entries = [f"{k}={v}".encode() for k, v in r["payload"].items()]
    write("CastTXTFuzzer", f"real-{i}", txt_wire(entries))
write("CastTXTFuzzer", "length-past-end", b"\x10id=abc")
write("CastTXTFuzzer", "zero-length-strings", b"\x00\x00\x05fn=TV\x00")
write("CastTXTFuzzer", "max-length-string", txt_wire([b"rs=" + b"x" * 252]))
write("CastTXTFuzzer", "keys-without-values", txt_wire([b"id", b"FN=Upper", b"fn=lower", b"=novalue", b"ca=4294967296", b"st= 1\t"]))
write("CastTXTFuzzer", "not-utf8", txt_wire([b"fn=\xff\xfe", b"\xc3(=1", b"id=\x00"]))
write("CastTXTFuzzer", "empty", b"")
# --- castd.toml: the documented file, and shapes TOML and castd's checks must refuse
with open(os.path.join(root, "packaging", "castd.toml")) as f:
    write("CastdConfigFuzzer", "packaging-castd.toml", f.read())
config = {
    "every-key": 'socket = "/run/castd/castd.sock"\nstate_directory = "/var/lib/castd"\ndevices = ["Kitchen=192.168.1.20", "10.0.0.5:8009"]\ndiscovery = true\ndevice_auth = "warn"\n[limits]\nmax_frame_bytes = 1048576\nmax_connections_per_uid = 8\nmax_calls_per_connection = 16\nwatcher_queue = 64\nidle_timeout_seconds = 5\nmax_mdns_services = 64\n[log]\nlevel = "debug"\n[log.filters]\n"Cast*" = "verbose"\n',
    "wrong-types": 'devices = "Kitchen"\ndiscovery = "yes"\n[limits]\nmax_frame_bytes = -1\nwatcher_queue = 1e400\n',
    "unknown-keys": 'sockett = "x"\n[limit]\nmax = 1\n[log.filters]\n"*" = 3\n',
    "deep-arrays": "devices = " + "[" * 300 + "]" * 300 + "\n",
    "deep-tables": "".join("[" + ".".join(["a"] * n) + "]\n" for n in range(1, 60)),
    "huge-integer": "[limits]\nmax_frame_bytes = 99999999999999999999999\n",
    "duplicate-keys": 'discovery = true\ndiscovery = false\n',
    "not-toml": '[[[\n"=\n',
    "control-characters": 'devices = ["Kit\u001bchen=1.2.3.4"]\n',
    "empty": "",
    # What castd's TOML reader accepts, and what it refuses (ConfigTOML)
    "escapes": 'socket = "/run/\\u00e9\\U0001F600\\t\\"\\\\"\nstate_directory = \'C:\\\\x\'\ndevice_auth = "w\\u0061rn"\n',
    "crlf-bom": '\ufeff# castd\r\n[limits]\r\nwatcher_queue = 64 # c\r\n',
    "dotted-quoted-inline": 'limits.watcher_queue = 64\n"socket" = \'/x\'\n[ log ]\nfilters = { "Cast*" = "debug", RPC = \'info\' }\n[access]\ncontrol_groups = [\n  "a", # one\n  \'b\',\n]\n',
    "refused-toml": 'a = 1.5\nb = 1979-05-27T07:32:00Z\nc = """x"""\n[[d]]\ne = [[1]]\nf = {g = {h = 1}}\nx = 0x1F\ny = 9223372036854775808\nz = "\\uD800"\n',
    "redefined-tables": '[log.filters]\nA = "x"\n[log]\nfilters.B = "y"\n[log]\nlog = {}\n',
}
for name, text in config.items():
    write("CastdConfigFuzzer", name + ".toml", text)

# --- sessions.json: castd's state file
good = {"deviceID": "a", "deviceName": "TV", "host": "192.168.1.20", "port": 8009, "sessionID": "s-1",
        "appID": "CC1AD845", "displayName": "Default Media Receiver", "transportID": "web-1",
        "namespaces": ["urn:x-cast:com.google.cast.media"], "appType": "WEB", "joined": False, "savedAt": 0}
def state(sessions, version=1):
    return json.dumps({"version": version, "sessions": sessions}, indent=2, sort_keys=True)
def variant(**changes):
    session = dict(good)
    session.update(changes)
    return session
states = {
    "one-session": state([good]),
    "two-sessions": state([good, variant(deviceID="b", host="::1", port=8443)]),
    "bad-port": state([variant(port=70000), variant(port=-1), variant(port=2**63)]),
    "bad-hosts": state([variant(host=""), variant(host="a b"), variant(host="x" * 300), variant(host="tv\n.local")]),
    "bad-namespaces": state([variant(namespaces=["http://x"] * 70)]),
    "control-characters": state([variant(deviceName="TV\u001b[2J", sessionID="s\u0000")]),
    "version-2": state([good], version=2),
    "missing-keys": state([{"deviceID": "a"}]),
    "wrong-types": '{"version":"1","sessions":{"deviceID":5}}',
    "not-json": '{"version": 1, "sessions": [',
    "empty": "",
}
for name, text in states.items():
    write("CastdStateFuzzer", name + ".json", text)

print("seeds written under", corpus)
