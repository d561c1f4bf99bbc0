#!/usr/bin/env python3
"""frontclient.py ADDR DIR METHOD [TABLE] [options] — one call through tlsfront.py with a self-signed JWT.

The path the C client takes (no token exchange): a TLS channel to ADDR verified with DIR/ca.pem, and
`authorization: Bearer JWT`, the JWT signed RS256 with a service account's key file (--key, default
DIR/sa.json; header kid = private_key_id, iss = sub = client_email, iat now, exp an hour on) for the
audience https://ADDR/SERVICE, as gRPC core's JWT credentials make it (ADDR without ":443"). Requests are
built as raw protobuf bytes; data calls carry x-goog-request-params as cbt sends it.
METHOD: ListTables | GetTable T | ReadRows T | SampleRowKeys T | MutateRow T (sets f:c = "jwt" in row
"jwt-row") | Token (no call: the key exchanged at its token_uri as cbt's -creds does, the access token
printed, to send with --bearer). Prints the tables (ListTables), the table's name (GetTable), the row keys
(ReadRows) or the count of samples; on a refusal prints "CODE: details" on stderr and exits 1.
Options to make a bad credential: --aud URL, --iat-in S and --exp-in S (seconds from now), --kid K,
--bearer VALUE (sent as it is, no JWT), --no-auth; --routing none|wrong, --app-profile P;
--print-jwt prints the JWT and exits. Python 3 with grpcio and PyJWT."""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import grpc
import jwt

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from tlsfront import varint as read_varint  # noqa: E402 (the reader the front parses requests with)

DATA = "google.bigtable.v2.Bigtable"
ADMIN = "google.bigtable.admin.v2.BigtableTableAdmin"
PROFILE_FIELD = {"ReadRows": 5, "SampleRowKeys": 2, "MutateRow": 4}


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, value):
    """A length-delimited field (a string, bytes or an embedded message)."""
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def fields(buf):
    """[(number, value)] of a message's top level: ints for varints, bytes for the rest."""
    out, i = [], 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(buf, i)
            out.append((num, v))
        elif wire == 2:
            n, i = read_varint(buf, i)
            out.append((num, buf[i:i + n]))
            i += n
        elif wire == 1:
            out.append((num, buf[i:i + 8]))
            i += 8
        elif wire == 5:
            out.append((num, buf[i:i + 4]))
            i += 4
        else:
            raise ValueError("wire type %d" % wire)
    return out


def exchange(key, now):
    """cbt's -creds: the key exchanged at its token_uri for an access token (OAuth2 JWT bearer grant)."""
    assertion = jwt.encode({"iss": key["client_email"], "aud": key["token_uri"],
                            "scope": "https://www.googleapis.com/auth/bigtable.data", "iat": now,
                            "exp": now + 3600}, key["private_key"], algorithm="RS256",
                           headers={"kid": key["private_key_id"]})
    body = urllib.parse.urlencode({"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                   "assertion": assertion}).encode()
    try:
        with urllib.request.urlopen(key["token_uri"], data=body, timeout=60) as r:
            print(json.load(r)["access_token"])
    except urllib.error.HTTPError as e:
        print("%d: %s" % (e.code, e.read().decode("utf-8", "replace")), file=sys.stderr)
        return 1
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("addr")
    p.add_argument("dir")
    p.add_argument("method")
    p.add_argument("table", nargs="?")
    p.add_argument("--key")
    p.add_argument("--aud")
    p.add_argument("--iat-in", type=int, default=0)
    p.add_argument("--exp-in", type=int, default=3600)
    p.add_argument("--kid")
    p.add_argument("--bearer")
    p.add_argument("--no-auth", action="store_true")
    p.add_argument("--routing", choices=["auto", "none", "wrong"], default="auto")
    p.add_argument("--app-profile", default="")
    p.add_argument("--project", default="p")
    p.add_argument("--instance", default="i")
    p.add_argument("--cert")
    p.add_argument("--print-jwt", action="store_true")
    o = p.parse_args()

    service = ADMIN if o.method in ("ListTables", "GetTable") else DATA
    host = o.addr[:-4] if o.addr.endswith(":443") else o.addr
    with open(o.key or os.path.join(o.dir, "sa.json")) as f:
        key = json.load(f)
    now = int(time.time())
    token = jwt.encode({"iss": key["client_email"], "sub": key["client_email"],
                        "aud": o.aud or "https://%s/%s" % (host, service),
                        "iat": now + o.iat_in, "exp": now + o.exp_in},
                       key["private_key"], algorithm="RS256",
                       headers={"kid": o.kid or key["private_key_id"]})
    if o.print_jwt:
        print(token)
        return 0
    if o.method == "Token":
        return exchange(key, now)

    instance = "projects/%s/instances/%s" % (o.project, o.instance)
    table = "%s/tables/%s" % (instance, o.table) if o.table else ""
    metadata = []
    if not o.no_auth:
        metadata.append(("authorization", "Bearer " + (o.bearer if o.bearer is not None else token)))
    if service == DATA:
        if not o.table:
            p.error("%s needs a TABLE" % o.method)
        routed = table if o.routing == "auto" else instance + "/tables/other"
        if o.routing != "none":
            metadata.append(("x-goog-request-params", "table_name=%s&app_profile_id=%s"
                             % (urllib.parse.quote(routed, safe=""), urllib.parse.quote(o.app_profile))))
        profile = field(PROFILE_FIELD[o.method], o.app_profile) if o.app_profile else b""
    else:
        metadata.append(("google-cloud-resource-prefix", instance))

    if o.method == "ListTables":
        request = field(1, instance)
    elif o.method == "GetTable":
        request = field(1, table)
    elif o.method == "ReadRows":
        request = field(1, table) + profile
    elif o.method == "SampleRowKeys":
        request = field(1, table) + profile
    elif o.method == "MutateRow":
        set_cell = field(1, "f") + field(2, b"c") + varint(3 << 3) + varint(1000) + field(4, b"jwt")
        request = field(1, table) + field(2, b"jwt-row") + field(3, field(1, set_cell)) + profile
    else:
        p.error("unknown method %s" % o.method)

    with open(o.cert or os.path.join(o.dir, "ca.pem"), "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    channel = grpc.secure_channel(o.addr, creds)
    path = "/%s/%s" % (service, o.method)
    try:
        if o.method in ("ReadRows", "SampleRowKeys"):
            responses = list(channel.unary_stream(path)(request, metadata=metadata, timeout=60))
        else:
            responses = [channel.unary_unary(path)(request, metadata=metadata, timeout=60)]
    except grpc.RpcError as e:
        print("%s: %s" % (e.code().name, e.details()), file=sys.stderr)
        return 1
    if o.method == "ListTables":
        for num, t in fields(responses[0]):
            if num == 1:
                name = dict(fields(t)).get(1, b"").decode()
                print(name.rsplit("/", 1)[-1])
    elif o.method == "GetTable":
        print(dict(fields(responses[0])).get(1, b"").decode())
    elif o.method == "ReadRows":
        for r in responses:
            for num, chunk in fields(r):
                if num == 1:
                    k = dict(fields(chunk)).get(1)
                    if k:
                        print(k.decode("utf-8", "replace"))
    elif o.method == "SampleRowKeys":
        print("%d samples" % len(responses))
    else:
        print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
