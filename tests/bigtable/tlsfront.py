#!/usr/bin/env python3
"""tlsfront.py UPSTREAM DIR [options] — a loopback stand-in for Google's front end in front of the emulator.

Serves gRPC over TLS (the Data API google.bigtable.v2.Bigtable and the Admin API
google.bigtable.admin.v2.BigtableTableAdmin on one port) with a certificate of a test CA, checks on every
call what Google's front end checks (the bearer credential, the routing header, the app profile, the
permissions given with --deny), refuses in Google's words, and forwards what passes to UPSTREAM (the
emulator's host:port, plaintext) as raw bytes, streams too, passing the upstream's status back. Nothing
refused reaches UPSTREAM. A second port serves, in plain HTTP, the OAuth2 token endpoint that cbt's -creds
exchanges a service account's key at (the JWT bearer grant). Prints one line "127.0.0.1:PORT" (the gRPC
address) once both listen; runs until SIGTERM or SIGINT. Python 3 with grpcio, PyJWT and cryptography.

Made in DIR when missing (so that several fronts can share one DIR; RSA keys are slow to make):
  ca.pem           the test CA that signed the server's certificate (127.0.0.1 and localhost): -cert-file
  other-ca.pem     an unrelated CA, for "wrong CA" tests
  sa.json          a service account's key in Google's JSON format, which the front knows
  sa-expired.json  a key of the same account that the front treats as disabled (expired)
  sa-unknown.json  a key the front does not know
  *-key.pem, token-secret: the private keys and the secret access tokens are signed with.
The key files' token_uri is the token endpoint of the front that made them, http://127.0.0.1:TPORT/token.
A later front of the same DIR listens on that port when it is free, else on another, and takes the port
over once it is free (so the key files work while one front of the DIR runs). The tokens any of them
issues are valid at all of them, with the lifetime (--token-seconds) of the front that issued them: to
give a front its own token endpoint, copy DIR's *.pem and token-secret into a new DIR and start it there.

A bearer credential is valid when it is
  a) an access token this front's token endpoint (or a sibling's) issued, unexpired, whose scope covers
     the API (cloud-platform, or a bigtable data or admin scope);
  b) the token given with --access-token T;
  c) a self-signed JWT (RS256) by a known key that is not disabled (header kid = private_key_id), iss and
     sub its client_email, exp > now, iat at most 60 s ahead, exp - iat <= 3600, and aud
     https://HOST/ or https://HOST/SERVICE, HOST the call's :authority without ":443" (or --audience-host
     H), SERVICE the called API's service name.
Else UNAUTHENTICATED "Request had invalid authentication credentials. ..." with the reason in brackets.
Data calls need x-goog-request-params with table_name and app_profile_id equal to the request's (else
INVALID_ARGUMENT); with --app-profile P, a data call naming another profile (none is "default") is
NOT_FOUND "App profile ... not found", as Bigtable answers for a profile the instance does not have.
--deny METHOD[:TABLE] makes the method (on that table) PERMISSION_DENIED "bigtable.tables.PERM permission
denied on table projects/P/instances/I/tables/T (or it may not exist)." (ListTables: "... on instance").

--log FILE appends one line per call (and per token request), flushed:
  TIME method=M table=T auth=jwt|token|access|none|unknown fp=HEX8 [iat= exp= aud=] [scope=] outcome=OK|CODE
fp is the first 8 hex digits of the sha256 of the bearer value (for the token endpoint: of the token it
issued, or of the assertion when refused). With --headers, each call's metadata (the authorization value
left out) follows on a line "  headers: ...".
"""
import argparse
import base64
import concurrent.futures
import datetime
import fcntl
import hashlib
import hmac
import http.server
import json
import os
import secrets
import signal
import sys
import threading
import time
import urllib.parse

# gRPC core logs each failed TLS handshake (a client with another CA: what tests do on purpose) on stderr.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import grpc  # noqa: E402 (after the environment it reads)
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DATA = "google.bigtable.v2.Bigtable"
ADMIN = "google.bigtable.admin.v2.BigtableTableAdmin"
# Server-streaming methods (every other one is unary; neither API has client streams).
STREAMS = {"ReadRows", "SampleRowKeys", "MutateRows", "ReadChangeStream",
           "GenerateInitialChangeStreamPartitions", "ExecuteQuery"}
# Data calls that name a table: the request's app_profile_id field number (table_name is field 1).
PROFILE_FIELD = {"ReadRows": 5, "SampleRowKeys": 2, "MutateRow": 4, "MutateRows": 3,
                 "CheckAndMutateRow": 7, "ReadModifyWriteRow": 4}
PERMISSION = {"ReadRows": "readRows", "SampleRowKeys": "readRows", "MutateRow": "mutateRows",
              "MutateRows": "mutateRows", "CheckAndMutateRow": "mutateRows",
              "ReadModifyWriteRow": "mutateRows", "DropRowRange": "mutateRows", "GetTable": "get",
              "ListTables": "list", "CreateTable": "create", "DeleteTable": "delete",
              "ModifyColumnFamilies": "update"}
DATA_SCOPES = {"https://www.googleapis.com/auth/bigtable.data",
               "https://www.googleapis.com/auth/bigtable.data.readonly",
               "https://www.googleapis.com/auth/cloud-bigtable.data",
               "https://www.googleapis.com/auth/cloud-bigtable.data.readonly",
               "https://www.googleapis.com/auth/cloud-platform",
               "https://www.googleapis.com/auth/cloud-platform.read-only"}
ADMIN_SCOPES = {"https://www.googleapis.com/auth/bigtable.admin",
                "https://www.googleapis.com/auth/bigtable.admin.table",
                "https://www.googleapis.com/auth/cloud-bigtable.admin",
                "https://www.googleapis.com/auth/cloud-bigtable.admin.table",
                "https://www.googleapis.com/auth/cloud-platform",
                "https://www.googleapis.com/auth/cloud-platform.read-only"}
UNAUTH = ("Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
          "other valid authentication credential. See "
          "https://developers.google.com/identity/sign-in/web/devconsole-project.")
EMAIL = "front-test@p.iam.gserviceaccount.com"
SKEW = 60
MAX_LIFETIME = 3600
UNLIMITED = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


class Refused(Exception):
    def __init__(self, code, details):
        super().__init__(details)
        self.code = code
        self.details = details


def fingerprint(value):
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---- the test CA, the server's certificate and the service-account keys, made once per DIR

def write_new(path, data, mode=0o600):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.rename(tmp, path)


def rsa_key(path):
    if os.path.exists(path):
        with open(path, "rb") as f:
            return serialization.load_pem_private_key(f.read(), password=None)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    write_new(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    return key


def ca_cert(path, key, name):
    if os.path.exists(path):
        with open(path, "rb") as f:
            return x509.load_pem_x509_certificate(f.read())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=True, crl_sign=True,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    write_new(path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert


def server_cert(path, key, ca, ca_key):
    if os.path.exists(path):
        return
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.SubjectAlternativeName([
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.IPAddress(ipaddress.ip_address("::1")),
                x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                         key_encipherment=True, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=False, crl_sign=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    write_new(path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def key_id(key):
    der = key.public_key().public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha1(der).hexdigest()


def key_file(path, key, token_uri):
    if os.path.exists(path):
        return
    kid = key_id(key)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    info = {
        "type": "service_account",
        "project_id": "p",
        "private_key_id": kid,
        "private_key": pem,
        "client_email": EMAIL,
        "client_id": str(int(kid[:16], 16)).rjust(21, "1")[:21],
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/"
                                + urllib.parse.quote(EMAIL),
        "universe_domain": "googleapis.com",
    }
    write_new(path, (json.dumps(info, indent=2) + "\n").encode())


class TokenServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that resets its kept-alive connection is no error worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def bind_token_port(port):
    """An HTTP listener on 127.0.0.1:port (0: any free port), or None if that port is taken."""
    try:
        return TokenServer(("127.0.0.1", port), TokenHandler)
    except OSError:
        return None


def materials(d):
    """Makes what DIR lacks, under a lock; returns (state, token HTTP server)."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ca_key = rsa_key(os.path.join(d, "ca-key.pem"))
        ca = ca_cert(os.path.join(d, "ca.pem"), ca_key, "cellfs test CA")
        srv_key = rsa_key(os.path.join(d, "server-key.pem"))
        server_cert(os.path.join(d, "server.pem"), srv_key, ca, ca_key)
        other_key = rsa_key(os.path.join(d, "other-ca-key.pem"))
        ca_cert(os.path.join(d, "other-ca.pem"), other_key, "cellfs unrelated CA")
        keys = {name: rsa_key(os.path.join(d, name + "-key.pem"))
                for name in ("sa", "sa-expired", "sa-unknown")}
        secret_path = os.path.join(d, "token-secret")
        if not os.path.exists(secret_path):
            write_new(secret_path, secrets.token_hex(32).encode())
        with open(secret_path, "rb") as f:
            secret = f.read().strip()

        sa_path = os.path.join(d, "sa.json")
        httpd = None
        taken = None
        if os.path.exists(sa_path):
            with open(sa_path) as f:
                token_uri = json.load(f)["token_uri"]
            httpd = bind_token_port(urllib.parse.urlsplit(token_uri).port or 80)
            if httpd is None:
                taken = urllib.parse.urlsplit(token_uri).port or 80
        if httpd is None:
            httpd = bind_token_port(0)
        port = httpd.server_address[1]
        if not os.path.exists(sa_path):
            token_uri = "http://127.0.0.1:%d/token" % port
        for name, key in keys.items():
            key_file(os.path.join(d, name + ".json"), key, token_uri)

        with open(os.path.join(d, "server-key.pem"), "rb") as f:
            srv_key_pem = f.read()
        with open(os.path.join(d, "server.pem"), "rb") as f:
            srv_pem = f.read()
    known = {key_id(keys["sa"]): (EMAIL, keys["sa"].public_key(), False),
             key_id(keys["sa-expired"]): (EMAIL, keys["sa-expired"].public_key(), True)}
    return {"known": known, "secret": secret, "token_uri": token_uri, "taken": taken,
            "server_key": srv_key_pem, "server_cert": srv_pem}, httpd


def take_over(port, stop):
    """While a sibling front (same DIR) serves the key files' token port, waits; once it is free (the
    sibling is gone), serves it here, so that the key files keep working as long as one front runs."""
    while not stop.wait(0.5):
        httpd = bind_token_port(port)
        if httpd is not None:
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            return


# ---- the log

class Log:
    def __init__(self, path, headers):
        self.f = open(path, "a") if path else None
        self.headers = headers
        self.lock = threading.Lock()

    def write(self, fields, metadata=None):
        if not self.f:
            return
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = now + " " + " ".join("%s=%s" % (k, v) for k, v in fields if v is not None)
        if self.headers and metadata is not None:
            shown = ["%s: %s" % (k, "<%d bytes>" % len(v) if k == "authorization" else v)
                     for k, v in metadata]
            line += "\n  headers: " + " | ".join(shown)
        with self.lock:
            self.f.write(line + "\n")
            self.f.flush()


# ---- access tokens: stateless, signed with DIR's secret, so that every front of a DIR takes them

def issue_token(state, email, kid, scope, seconds):
    now = int(time.time())
    body = b64url(json.dumps({"sub": email, "kid": kid, "scope": scope, "iat": now, "exp": now + seconds,
                              "n": secrets.token_hex(6)}).encode())
    mac = b64url(hmac.new(state["secret"], body.encode(), hashlib.sha256).digest())
    return "ya29.%s.%s" % (body, mac)


def read_token(state, value):
    """The claims of an access token the token endpoint issued, or None if it is not one."""
    if not value.startswith("ya29."):
        return None
    try:
        body, mac = value[5:].split(".")
        good = b64url(hmac.new(state["secret"], body.encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(good.encode(), mac.encode("utf-8", "surrogateescape")):
            return None
        return json.loads(unb64url(body))
    except (ValueError, TypeError):
        return None


# ---- the credential check

def check_jwt(state, token, audiences, want_aud_text):
    """Verifies a self-signed JWT; returns its claims or raises Refused (UNAUTHENTICATED)."""
    def bad(reason):
        raise Refused(grpc.StatusCode.UNAUTHENTICATED, UNAUTH + " (" + reason + ")")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as e:
        bad("not a JWT: %s" % e)
    if header.get("alg") != "RS256":
        bad("JWT alg %s, not RS256" % header.get("alg"))
    kid = header.get("kid")
    if kid not in state["known"]:
        bad("JWT signed by an unknown key: kid %s" % kid)
    email, public, disabled = state["known"][kid]
    if disabled:
        bad("JWT signed by key %s of %s, which is disabled or expired" % (kid, email))
    try:
        claims = jwt.decode(token, public, algorithms=["RS256"],
                            options={"verify_exp": False, "verify_iat": False, "verify_nbf": False,
                                     "verify_aud": False, "verify_iss": False})
    except jwt.PyJWTError as e:
        bad("JWT signature: %s" % e)
    now = time.time()
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, (int, float)) or not isinstance(exp, (int, float)):
        bad("JWT without iat or exp")
    if claims.get("iss") != email or claims.get("sub") != email:
        bad("JWT iss %s, sub %s: not the key's account %s" % (claims.get("iss"), claims.get("sub"), email))
    if exp <= now:
        bad("JWT expired %d s ago" % int(now - exp + 1))
    if iat > now + SKEW:
        bad("JWT iat %d s in the future" % int(iat - now))
    if exp - iat > MAX_LIFETIME:
        bad("JWT lifetime %d s, more than %d" % (int(exp - iat), MAX_LIFETIME))
    if claims.get("aud") not in audiences:
        bad("JWT audience %s, expected %s" % (claims.get("aud"), want_aud_text))
    return claims


def authenticate(opts, state, metadata, service, authority):
    """Returns the log fields of a valid credential, or raises Refused with them as .fields."""
    fields = [("auth", "none"), ("fp", None)]
    value = None
    for k, v in metadata:
        if k == "authorization":
            value = v
            break
    try:
        if value is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, UNAUTH + " (no authorization header)")
        if not value.startswith("Bearer "):
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, UNAUTH + " (authorization is not \"Bearer ...\")")
        bearer = value[7:]
        fields = [("auth", "unknown"), ("fp", fingerprint(bearer))]
        given = opts.access_token
        if given is not None and hmac.compare_digest(bearer.encode("utf-8", "surrogateescape"),
                                                     given.encode("utf-8", "surrogateescape")):
            fields[0] = ("auth", "token")
            return fields
        claims = read_token(state, bearer)
        if claims is not None:
            fields[0] = ("auth", "access")
            fields += [("iat", claims["iat"]), ("exp", claims["exp"])]
            if claims["exp"] <= time.time():
                ago = int(time.time() - claims["exp"] + 1)
                raise Refused(grpc.StatusCode.UNAUTHENTICATED,
                              UNAUTH + " (access token expired %d s ago)" % ago)
            wanted = DATA_SCOPES if service == DATA else ADMIN_SCOPES
            if not set(str(claims.get("scope", "")).split()) & wanted:
                fields.append(("scope", claims.get("scope")))
                raise Refused(grpc.StatusCode.PERMISSION_DENIED,
                              "Request had insufficient authentication scopes.")
            return fields
        if bearer.count(".") == 2 and not bearer.startswith("ya29."):
            fields[0] = ("auth", "jwt")
            host = opts.audience_host if opts.audience_host else authority
            if host.endswith(":443"):
                host = host[:-4]
            audiences = ("https://%s/" % host, "https://%s/%s" % (host, service))
            try:
                header = jwt.get_unverified_header(bearer)
                raw = jwt.decode(bearer, options={"verify_signature": False})
                fields += [("kid", str(header.get("kid"))[:8]), ("iat", raw.get("iat")),
                           ("exp", raw.get("exp")), ("aud", raw.get("aud"))]
            except jwt.PyJWTError:
                pass
            check_jwt(state, bearer, audiences, " or ".join(audiences))
            return fields
        raise Refused(grpc.StatusCode.UNAUTHENTICATED,
                      UNAUTH + " (neither an access token this front issued, nor --access-token, nor a JWT)")
    except Refused as r:
        r.fields = fields
        raise


# ---- the request: just enough of protobuf's wire format to read a field's string

def varint(buf, i):
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def string_fields(buf):
    """{field number: last length-delimited value as str} of a message's top level; ValueError if bad."""
    out = {}
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise ValueError("field 0")
        if wire == 0:
            _, i = varint(buf, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(buf, i)
            if i + n > len(buf):
                raise ValueError("length past the end")
            out[field] = buf[i:i + n].decode("utf-8", "replace")
            i += n
        else:
            raise ValueError("wire type %d" % wire)
        if i > len(buf):
            raise ValueError("truncated")
    return out


def table_of(name):
    """The table id of projects/P/instances/I/tables/T, else None."""
    parts = name.split("/")
    if len(parts) == 6 and parts[0] == "projects" and parts[2] == "instances" and parts[4] == "tables":
        return parts[5]
    return None


def check_request(opts, service, method, request, metadata, found):
    """Routing, app profile and --deny; returns the table's id (or None), also put in found["table"] as
    soon as it is known; raises Refused."""
    try:
        fields = string_fields(request)
    except ValueError as e:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "Invalid request: cannot parse it (%s)" % e)
    table = None
    resource = None
    if service == DATA and method in PROFILE_FIELD:
        name = fields.get(1, "")
        profile = fields.get(PROFILE_FIELD[method], "")
        table = found["table"] = table_of(name)
        resource = "table " + name
        header = None
        for k, v in metadata:
            if k == "x-goog-request-params":
                header = v
                break
        if header is None:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          "Missing x-goog-request-params header: a %s call must name its table_name "
                          "(and app_profile_id) there for routing" % method)
        params = dict(urllib.parse.parse_qsl(header, keep_blank_values=True))
        if "table_name" not in params:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          "x-goog-request-params has no table_name (%r)" % header)
        if params["table_name"] != name:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          "x-goog-request-params table_name %r is not the request's table_name %r"
                          % (params["table_name"], name))
        if params.get("app_profile_id", "") != profile:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                          "x-goog-request-params app_profile_id %r is not the request's app_profile_id %r"
                          % (params.get("app_profile_id"), profile))
        if opts.app_profile is not None and (profile or "default") != opts.app_profile:
            instance = "/".join(name.split("/")[:4])
            raise Refused(grpc.StatusCode.NOT_FOUND, "App profile %s/appProfiles/%s not found."
                          % (instance, profile or "default"))
    elif service == ADMIN:
        first = fields.get(1, "")
        if method == "CreateTable":
            table = found["table"] = fields.get(2)
            resource = "table %s/tables/%s" % (first, table)
        elif method == "ListTables":
            resource = "instance " + first
        else:
            table = found["table"] = table_of(first)
            resource = "table " + first
    perm = PERMISSION.get(method)
    for deny in opts.deny:
        m, _, t = deny.partition(":")
        if m == method and (not t or t == table):
            raise Refused(grpc.StatusCode.PERMISSION_DENIED,
                          "bigtable.tables.%s permission denied on %s (or it may not exist)."
                          % (perm or method, resource or "this resource"))
    return table


# ---- forwarding

class Front:
    def __init__(self, opts, state, log):
        self.opts = opts
        self.state = state
        self.log = log
        self.channel = grpc.insecure_channel(opts.upstream, options=UNLIMITED)

    def handler(self, details):
        path = details.method
        service, _, method = path.lstrip("/").partition("/")
        if method in STREAMS:
            return grpc.unary_stream_rpc_method_handler(
                lambda req, ctx: self.stream(path, service, method, req, ctx))
        return grpc.unary_unary_rpc_method_handler(
            lambda req, ctx: self.unary(path, service, method, req, ctx))

    def admit(self, service, method, request, context):
        """Checks the call; returns (log fields, metadata to forward) or (fields, None) when refused."""
        metadata = [(k, v) for k, v in context.invocation_metadata()]
        authority = authority_of(context)
        shown = [(":authority", authority)] + metadata
        fields = [("method", method)]
        try:
            auth = authenticate(self.opts, self.state, metadata, service, authority)
        except Refused as r:
            self.refuse(context, fields + r.fields, r, shown)
            return None
        found = {"table": None}
        try:
            table = check_request(self.opts, service, method, request, metadata, found)
        except Refused as r:
            self.refuse(context, fields + [("table", found["table"])] + auth, r, shown)
            return None
        fields += [("table", table)] + auth
        forward = [(k, v) for k, v in metadata
                   if k.startswith("x-goog-") or k in ("google-cloud-resource-prefix", "bigtable-features")]
        return fields, forward, shown

    def refuse(self, context, fields, refused, metadata):
        self.log.write(fields + [("outcome", refused.code.name), ("why", "%r" % refused.details[-120:])],
                       metadata)
        context.set_code(refused.code)
        context.set_details(refused.details)

    def unary(self, path, service, method, request, context):
        admitted = self.admit(service, method, request, context)
        if admitted is None:
            return b""
        fields, forward, metadata = admitted
        call = self.channel.unary_unary(path).future(request, timeout=timeout_of(context),
                                                     metadata=forward)
        context.add_callback(call.cancel)
        try:
            response = call.result()
        except grpc.RpcError as e:
            self.log.write(fields + [("outcome", e.code().name)], metadata)
            context.set_code(e.code())
            context.set_details(e.details())
            return b""
        except grpc.FutureCancelledError:
            self.log.write(fields + [("outcome", "CANCELLED")], metadata)
            return b""
        self.log.write(fields + [("outcome", "OK")], metadata)
        return response

    def stream(self, path, service, method, request, context):
        admitted = self.admit(service, method, request, context)
        if admitted is None:
            return
        fields, forward, metadata = admitted
        call = self.channel.unary_stream(path)(request, timeout=timeout_of(context), metadata=forward)
        context.add_callback(call.cancel)
        try:
            for response in call:
                yield response
        except GeneratorExit:  # the client went away: gRPC closes the handler's generator
            call.cancel()
            self.log.write(fields + [("outcome", "CANCELLED")], metadata)
            raise
        except grpc.RpcError as e:
            self.log.write(fields + [("outcome", e.code().name)], metadata)
            if e.code() != grpc.StatusCode.CANCELLED or context.is_active():
                context.set_code(e.code())
                context.set_details(e.details())
            return
        self.log.write(fields + [("outcome", "OK")], metadata)


def authority_of(context):
    # The :authority of the call: gRPC core keeps it as the call's host (grpcio's ServicerContext has no
    # public accessor for it; the call details it keeps do).
    try:
        host = context._rpc_event.call_details.host
        return host.decode() if isinstance(host, bytes) else str(host)
    except AttributeError:
        return ""


def timeout_of(context):
    left = context.time_remaining()
    return None if left is None or left > 1e8 else max(left, 0.001)


class Generic(grpc.GenericRpcHandler):
    def __init__(self, front):
        self.front = front

    def service(self, details):
        return self.front.handler(details)


# ---- the token endpoint (OAuth2 JWT bearer grant)

class TokenHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    front = None  # (opts, state, log), set before serving

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(405, {"error": "invalid_request", "error_description": "POST the token request"})

    def do_POST(self):
        opts, state, log = TokenHandler.front
        length = int(self.headers.get("Content-Length") or 0)
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode("utf-8", "replace"),
                                           keep_blank_values=True))
        assertion = form.get("assertion", "")
        fields = [("method", "token"), ("auth", "assertion"), ("fp", fingerprint(assertion))]

        def refuse(error, description):
            log.write(fields + [("outcome", error), ("why", "%r" % description)])
            self.answer(400, {"error": error, "error_description": description})

        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return refuse("unsupported_grant_type", "Invalid grant_type: %s" % form.get("grant_type", ""))
        try:
            header = jwt.get_unverified_header(assertion)
            raw = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError as e:
            return refuse("invalid_grant", "Invalid JWT: %s" % e)
        kid = header.get("kid")
        fields += [("kid", str(kid)[:8]), ("iat", raw.get("iat")), ("exp", raw.get("exp")),
                   ("aud", raw.get("aud")), ("scope", raw.get("scope"))]
        if kid not in state["known"]:
            return refuse("invalid_grant", "Invalid JWT Signature. (unknown key id %s)" % kid)
        email, public, disabled = state["known"][kid]
        if disabled:
            return refuse("invalid_grant", "Invalid JWT Signature. (key %s of %s is disabled or expired)"
                          % (kid, email))
        try:
            claims = jwt.decode(assertion, public, algorithms=["RS256"],
                                options={"verify_exp": False, "verify_iat": False, "verify_aud": False})
        except jwt.PyJWTError as e:
            return refuse("invalid_grant", "Invalid JWT Signature. (%s)" % e)
        now = time.time()
        if claims.get("iss") != email:
            return refuse("invalid_grant", "Invalid JWT: iss %s is not the key's account %s"
                          % (claims.get("iss"), email))
        if claims.get("aud") != state["token_uri"]:
            return refuse("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) "
                          "and in a reasonable timeframe. Check your iat and exp values in the JWT claim. "
                          "(aud %s, not %s)" % (claims.get("aud"), state["token_uri"]))
        exp, iat = claims.get("exp"), claims.get("iat")
        if (not isinstance(exp, (int, float)) or not isinstance(iat, (int, float)) or exp <= now
                or iat > now + SKEW or exp - iat > MAX_LIFETIME):
            return refuse("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) "
                          "and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
        if not claims.get("scope"):
            return refuse("invalid_scope", "Invalid OAuth scope or ID token audience provided.")
        token = issue_token(state, email, kid, claims["scope"], opts.token_seconds)
        fields[2] = ("fp", fingerprint(token))
        log.write(fields + [("outcome", "OK")])
        self.answer(200, {"access_token": token, "expires_in": opts.token_seconds, "token_type": "Bearer"})


def main():
    p = argparse.ArgumentParser(description="A loopback TLS front for the Bigtable emulator.")
    p.add_argument("upstream", help="the emulator's host:port (plaintext)")
    p.add_argument("dir", help="where the CA, certificates and keys are (made when missing)")
    p.add_argument("--access-token", help="a bearer token accepted as it is")
    p.add_argument("--audience-host", help="the HOST of the JWT audiences accepted, instead of :authority")
    p.add_argument("--app-profile", help="the only app profile data calls may name (none: default)")
    p.add_argument("--deny", action="append", default=[], metavar="METHOD[:TABLE]",
                   help="PERMISSION_DENIED for that method (on that table); repeatable")
    p.add_argument("--token-seconds", type=int, default=3600, help="lifetime of the tokens issued")
    p.add_argument("--log", help="append one line per call to this file")
    p.add_argument("--headers", action="store_true", help="log each call's metadata too")
    p.add_argument("--workers", type=int, default=64, help="server threads (a stream holds one)")
    opts = p.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())

    state, httpd = materials(opts.dir)
    log = Log(opts.log, opts.headers)
    TokenHandler.front = (opts, state, log)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    if state["taken"]:
        threading.Thread(target=take_over, args=(state["taken"], stop), daemon=True).start()
    if state["taken"]:
        threading.Thread(target=take_over, args=(state["taken"], stop), daemon=True).start()

    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=opts.workers),
                         handlers=[Generic(Front(opts, state, log))], options=UNLIMITED)
    creds = grpc.ssl_server_credentials([(state["server_key"], state["server_cert"])])
    port = server.add_secure_port("127.0.0.1:0", creds)
    if not port:
        print("tlsfront: cannot listen on 127.0.0.1", file=sys.stderr)
        sys.exit(1)
    server.start()
    print("127.0.0.1:%d" % port, flush=True)
    while not stop.wait(0.5):
        pass
    server.stop(None)
    httpd.shutdown()
    sys.exit(0)


if __name__ == "__main__":
    main()
