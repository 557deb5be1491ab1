package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.util.List;
import java.util.TreeSet;

/**
 * The keyed hashes by which the forget engine names what it must never hold in the clear: an
 * operation's scope and request (for idempotency), the fences a sealed operation leaves (a
 * subject, a source, a record id, which later writes are checked against), the scopes of legal
 * holds, and the keystore id of an operation's own key. Each kind has its own domain string, so
 * a hash of one kind never matches another.
 */
final class ScopeHashes {

    private final KeyedHash hashes;

    ScopeHashes(KeyedHash hashes) {
        this.hashes = hashes;
    }

    KeyedHash keyed() {
        return hashes;
    }

    KeyedHash.Hash scope(String tenant, ForgetScope scope) {
        return switch (scope) {
            case ForgetScope.Subject s -> hashes.of("forget-scope-subject", tenant, s.subject());
            case ForgetScope.Records r -> hashes.of("forget-scope-records", tenant, String.join("\0", new TreeSet<>(r.ids())));
            case ForgetScope.Source s -> hashes.of("forget-scope-source", tenant, s.sourceKind(), s.sourceId(),
                    s.version() == null ? "*" : Long.toString(s.version()));
            case ForgetScope.Metadata m -> hashes.of("forget-scope-metadata", tenant, m.filter().toString());
        };
    }

    /** Everything that makes two requests the same request (an idempotency key may repeat only that). */
    KeyedHash.Hash request(ForgetRequest r, double threshold) {
        return hashes.of("forget-request", scope(r.tenant(), r.scope()).toString(), r.reasonCode(),
                Double.toString(threshold), r.level().name(), String.join("\0", new TreeSet<>(r.identifiers())));
    }

    KeyedHash.Hash idempotency(String tenant, String key) {
        return hashes.of("forget-idempotency", tenant, key);
    }

    /** The fences a scope leaves once sealed (a metadata scope leaves the ids it resolved to, added at cleanup). */
    List<KeyedHash.Hash> fences(String tenant, ForgetScope scope) {
        return switch (scope) {
            case ForgetScope.Subject s -> List.of(fenceSubject(tenant, s.subject()));
            case ForgetScope.Records r -> r.ids().stream().map(id -> fenceRecord("*", tenant, id)).toList();
            case ForgetScope.Source s -> List.of(fenceSource(tenant, s.sourceKind(), s.sourceId(), s.version()));
            case ForgetScope.Metadata m -> List.of();
        };
    }

    KeyedHash.Hash fenceSubject(String tenant, String subject) {
        return hashes.of("fence-subject", tenant, subject);
    }

    KeyedHash.Hash fenceSource(String tenant, String kind, String id, Long version) {
        return hashes.of("fence-source", tenant, kind, id, version == null ? "*" : Long.toString(version));
    }

    /** A forgotten record's fence; collection "*" fences the id in every collection of the tenant. */
    KeyedHash.Hash fenceRecord(String collection, String tenant, String id) {
        return hashes.of("fence-record", collection, tenant, id);
    }

    KeyedHash.Hash holdSubject(String tenant, String subject) {
        return hashes.of("hold-subject", tenant, subject);
    }

    KeyedHash.Hash holdSource(String tenant, String kind, String id) {
        return hashes.of("hold-source", tenant, kind, id);
    }

    /** The keystore id of an operation's own key, under which its private part is sealed. */
    KeyedHash.Hash operationKey(String operationId) {
        return hashes.of("forget-operation-key", operationId);
    }
}
