"""An independent client for Nepenthe's gRPC API: Python's grpcio, with the messages built at run
time from the API's FileDescriptorSet (the build writes it; no generated stubs, so no protoc of
the client's own is needed). Run by the Java end-to-end test against a server in another process.

usage: e2e_client.py DESCRIPTOR_SET HOST:PORT OPERATOR_TOKEN_FILE GLOBEX_TOKEN_FILE OUT_DIR

Prints one line per step ("ok ..."), writes the receipt and the public key into OUT_DIR, and
exits non-zero with the failing step on the first surprise.
"""
import sys
import time

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

descriptor_set, address, operator_file, globex_file, out_dir = sys.argv[1:6]

fds = descriptor_pb2.FileDescriptorSet()
with open(descriptor_set, "rb") as f:
    fds.ParseFromString(f.read())
pool = descriptor_pool.DescriptorPool()
for proto in fds.file:
    pool.Add(proto)
factory = message_factory.MessageFactory(pool)


def msg(name):
    d = pool.FindMessageTypeByName("nepenthe.v1." + name)
    get = getattr(message_factory, "GetMessageClass", None)
    return get(d) if get else factory.GetPrototype(d)


channel = grpc.insecure_channel(address)


def rpc(service, method, request, response, token, stream=False):
    path = "/nepenthe.v1.%s/%s" % (service, method)
    make = channel.unary_stream if stream else channel.unary_unary
    call = make(path, request_serializer=lambda m: m.SerializeToString(), response_deserializer=msg(response).FromString)
    return lambda req, timeout=30: call(req, timeout=timeout, metadata=[("authorization", "Bearer " + token)])


def fail(step, detail):
    print("FAIL %s: %s" % (step, detail))
    sys.exit(1)


operator = open(operator_file).read().strip()
globex = open(globex_file).read().strip()

# The operator's token belongs to the default tenant; it creates the collection and writes there.
create = rpc("Collections", "Create", "CreateCollectionRequest", "CollectionInfo", operator)
spec = msg("CollectionSpec")(name="notes", dimension=4, metric=1)
create(msg("CreateCollectionRequest")(spec=spec))
print("ok create")

Record = msg("Record")
records = []
for i, (subject, v) in enumerate([("alice", [1, 0, 0, 0]), ("alice", [0.9, 0.1, 0, 0]), ("bob", [0, 1, 0, 0]),
                                  ("carol", [0, 0, 1, 0])]):
    r = Record(id="r%d" % i, subject=subject, text="note %d about %s" % (i, subject))
    r.vector.extend(v)
    records.append(r)
upsert = rpc("Records", "Upsert", "UpsertRequest", "UpsertResponse", operator)
req = msg("UpsertRequest")(collection="notes")
req.records.extend(records)
n = upsert(req).upserted
if n != 4:
    fail("upsert", "expected 4 stored, got %d" % n)
print("ok upsert 4")

search = rpc("Records", "Search", "SearchRequest", "SearchResponse", operator)
q = msg("SearchRequest")(collection="notes", k=3)
q.vector.extend([1, 0.05, 0, 0])
hits = [h.record.id for h in search(q).hits]
if hits[:2] != ["r0", "r1"]:
    fail("search", "expected r0 and r1 first, got %s" % hits)
print("ok search %s" % hits)

# Tenant B sees nothing of tenant A, and its forget of the same name touches nothing of A's.
if [h.record.id for h in rpc("Records", "Search", "SearchRequest", "SearchResponse", globex)(q).hits]:
    fail("tenant wall", "globex's search returned the default tenant's records")
get_b = rpc("Records", "Get", "GetRequest", "GetResponse", globex)
try:
    get_b(msg("GetRequest")(collection="notes", id="r0"))
    fail("tenant wall", "globex could get r0")
except grpc.RpcError as e:
    if e.code() != grpc.StatusCode.NOT_FOUND:
        fail("tenant wall", "expected NOT_FOUND, got %s" % e.code())
Scope = msg("ForgetScope")
forget_b = rpc("Forget", "Forget", "ForgetRequest", "Operation", globex)
forget_b(msg("ForgetRequest")(scope=Scope(subject="alice"), idempotency_key="b-1", reason_code="test"))
time.sleep(0.5)
if [h.record.id for h in search(q).hits][:2] != ["r0", "r1"]:
    fail("tenant wall", "globex's forget of 'alice' reached the default tenant's records")
print("ok tenant wall")

# Forget alice: BLOCKED when the call returns, then watch until a settled state.
forget = rpc("Forget", "Forget", "ForgetRequest", "Operation", operator)
op = forget(msg("ForgetRequest")(scope=Scope(subject="alice"), idempotency_key="ticket-1", reason_code="gdpr-art17"))
if op.state != "BLOCKED":
    fail("forget", "expected BLOCKED, got %s" % op.state)
if any(h.record.subject == "alice" for h in search(q).hits):
    fail("forget", "a search after forget() returned alice's records")
watch = rpc("Forget", "Watch", "GetOperationRequest", "Operation", operator, stream=True)
states = []
last = None
for update in watch(msg("GetOperationRequest")(id=op.id), timeout=120):
    states.append(update.state)
    last = update
if not last or last.state != "SEALED" or last.outcome != "ERASED":
    fail("watch", "expected SEALED with outcome ERASED, got %s" % states)
print("ok watch %s" % " ".join(states))

# The receipt and the public key leave with the client; the Java side verifies them offline too.
pem = rpc("Forget", "GetPublicKey", "PublicKeyRequest", "PublicKey", operator)(msg("PublicKeyRequest")()).pem
check = rpc("Forget", "VerifyReceipt", "VerifyReceiptRequest", "ReceiptCheck", operator)
if not check(msg("VerifyReceiptRequest")(receipt=last.receipt)).ok:
    fail("receipt", "the server's own check of the receipt failed")
with open(out_dir + "/receipt.txt", "w") as f:
    f.write(last.receipt)
with open(out_dir + "/public-key.pem", "w") as f:
    f.write(pem)
print("ok receipt")

# A missing token and a wrong one are refused.
for token, what in ((None, "no token"), ("not-a-token", "a wrong token")):
    call = channel.unary_unary("/nepenthe.v1.Collections/List", request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=msg("ListCollectionsResponse").FromString)
    try:
        call(msg("ListCollectionsRequest")(), timeout=10,
             metadata=[] if token is None else [("authorization", "Bearer " + token)])
        fail("auth", "%s was accepted" % what)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.UNAUTHENTICATED:
            fail("auth", "%s: expected UNAUTHENTICATED, got %s" % (what, e.code()))
print("ok auth")
print("done")
