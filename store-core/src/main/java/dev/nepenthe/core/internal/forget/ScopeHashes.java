package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.forget.ForgetRequest;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.JoinKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The keyed hashes by which the forget engine names what it must never hold in the clear: an
 * operation's scope and request (for idempotency), the fences a sealed operation leaves (a subject,
 * a source, a record id, which later writes are checked against), the scopes of legal holds, and
 * the keystore id of an operation's own key. Each kind has its own domain string, so a hash of one
 * kind never matches another.
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
            case ForgetScope.Records r ->
                    hashes.of(
                            "forget-scope-records",
                            tenant,
                            String.join("\0", new TreeSet<>(r.ids())));
            case ForgetScope.Source s ->
                    hashes.of(
                            "forget-scope-source",
                            tenant,
                            s.sourceKind(),
                            s.sourceId(),
                            s.version() == null ? "*" : Long.toString(s.version()));
            case ForgetScope.Metadata m ->
                    hashes.of("forget-scope-metadata", tenant, canonical(m.filter()));
        };
    }

    /**
     * One spelling per filter meaning, for hashing: {@code toString()} would not do, since an
     * {@code in} filter's set iterates in an order that changes from one JVM run to the next (a
     * retried forget after a restart would hash as another request), and {@code eq(3)} and {@code
     * eq(3.0)}, which match the same records, print differently. Sets and the children of {@code
     * and} and {@code or} are sorted, numbers written by value, and every string length-prefixed so
     * no key or value can forge a delimiter.
     */
    static String canonical(Filter f) {
        return switch (f) {
            case Filter.Eq e -> "eq(" + str(e.key()) + value(e.value()) + ")";
            case Filter.In in ->
                    "in("
                            + str(in.key())
                            + in.values().stream()
                                    .map(ScopeHashes::value)
                                    .sorted()
                                    .distinct()
                                    .collect(Collectors.joining(","))
                            + ")";
            case Filter.Range r ->
                    "range(" + str(r.key()) + number(r.min()) + "," + number(r.max()) + ")";
            case Filter.Compare c ->
                    "cmp(" + str(c.key()) + c.comparison().name() + "," + value(c.value()) + ")";
            case Filter.Contains c -> "contains(" + str(c.key()) + str(c.substring()) + ")";
            case Filter.Exists e -> "exists(" + str(e.key()) + ")";
            case Filter.Not n -> "not(" + canonical(n.inner()) + ")";
            case Filter.And a -> "and(" + unordered(a.all()) + ")";
            case Filter.Or o -> "or(" + unordered(o.any()) + ")";
        };
    }

    /** The parts' canonical forms in sorted order: a conjunction's order does not change it. */
    private static String unordered(List<Filter> parts) {
        return parts.stream().map(ScopeHashes::canonical).sorted().collect(Collectors.joining(","));
    }

    private static String str(String s) {
        return s.length() + ":" + s;
    }

    private static String value(Object v) {
        return switch (v) {
            case String s -> "s" + str(s);
            case Boolean b -> "b" + b;
            case Number n -> number(n);
            default -> "o" + str(String.valueOf(v));
        };
    }

    /**
     * A number by value: an integral one as a long (3 and 3.0 alike), any other as Java writes a
     * double.
     */
    private static String number(Number n) {
        if (n instanceof Double || n instanceof Float) {
            double d = n.doubleValue();
            return d == Math.rint(d) && Math.abs(d) < 0x1p62 ? "n" + (long) d : "n" + d;
        }
        return "n" + n.longValue();
    }

    /**
     * Everything that makes two requests the same request (an idempotency key may repeat only
     * that).
     */
    KeyedHash.Hash request(ForgetRequest r, double threshold) {
        List<String> parts =
                new ArrayList<>(
                        Arrays.asList(
                                scope(r.tenant(), r.scope()).toString(),
                                r.reasonCode(),
                                Double.toString(threshold),
                                r.level().name(),
                                String.join("\0", new TreeSet<>(r.identifiers()))));
        if (r.exactProbe()) {
            // Only when forced, so that a request recorded before the choice existed hashes as it
            // did.
            parts.add("exact-probe");
        }
        return hashes.of("forget-request", parts.toArray(String[]::new));
    }

    /**
     * A subject identifier a verification looked for, as it matches (so "Alice Smith" and "alice
     * smith" hash alike): what a receipt names instead of the identifier. Whoever holds the store's
     * key can check whether a given name was sought; no one else can.
     */
    KeyedHash.Hash identifier(String tenant, JoinKeys.Identifier id) {
        return hashes.of("forget-identifier", tenant, id.canonical());
    }

    KeyedHash.Hash idempotency(String tenant, String key) {
        return hashes.of("forget-idempotency", tenant, key);
    }

    /**
     * The fences a scope leaves once sealed (a metadata scope leaves the ids it resolved to, added
     * at cleanup).
     */
    List<KeyedHash.Hash> fences(String tenant, ForgetScope scope) {
        return switch (scope) {
            case ForgetScope.Subject s -> List.of(fenceSubject(tenant, s.subject()));
            case ForgetScope.Records r ->
                    r.ids().stream().map(id -> fenceRecord("*", tenant, id)).toList();
            case ForgetScope.Source s ->
                    List.of(fenceSource(tenant, s.sourceKind(), s.sourceId(), s.version()));
            case ForgetScope.Metadata m -> List.of();
        };
    }

    KeyedHash.Hash fenceSubject(String tenant, String subject) {
        return hashes.of("fence-subject", tenant, subject);
    }

    KeyedHash.Hash fenceSource(String tenant, String kind, String id, Long version) {
        return hashes.of(
                "fence-source", tenant, kind, id, version == null ? "*" : Long.toString(version));
    }

    /**
     * A forgotten record's fence; collection "*" fences the id in every collection of the tenant.
     */
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
