package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.ForgottenScopeException;
import dev.nepenthe.core.forget.OperationState;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.engine.CollectionEngine;
import dev.nepenthe.core.internal.engine.DerivedFromRef;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;

/**
 * The write fence every collection checks each batch against, under its writer mutex: a record in
 * the scope of a live forget (tested on its plaintext scope, in memory), with the id of a record a
 * forget removed, or deriving from one, is refused; so is one a sealed forget's keyed hashes name
 * (its subject, source or id), which is also how reconciliation finds records that came back. A
 * re-admission lifts some of a sealed operation's fences: writes they name pass again, and
 * reconciliation still removes a record they name whose version is below the floor the re-admission
 * took in its collection (it is from before the forget). The fences are rebuilt whole from the
 * operations and re-admissions and published with one volatile write, so the check takes no lock.
 */
final class WriteFences implements CollectionEngine.WriteFence {

    /** A live operation's scope (plaintext, memory only). */
    private record Active(
            String operation,
            String tenant,
            BiPredicate<String, VectorRecord> inScope,
            Set<String> forgottenIds) {}

    /**
     * A sealed operation's fence that a re-admission lifted: no write is refused by it, and a
     * record it names is one the operation erased only if its version is below the floor taken in
     * its collection (by incarnation id; a collection made later has none: all its records are
     * new).
     */
    record Lifted(String operation, Map<String, Long> floors) {}

    private record Fences(
            List<Active> active,
            Map<KeyedHash.Hash, String> hashed,
            Map<KeyedHash.Hash, Lifted> lifted) {
        static final Fences NONE = new Fences(List.of(), Map.of(), Map.of());
    }

    private final ScopeHashes hashes;
    private volatile Fences fences = Fences.NONE;

    WriteFences(ScopeHashes hashes) {
        this.hashes = hashes;
    }

    @Override
    public void check(String collection, List<VectorRecord> batch) {
        Fences f = fences;
        if (f.active().isEmpty() && f.hashed().isEmpty()) {
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            VectorRecord r = batch.get(i);
            for (Active a : f.active()) {
                if (!a.tenant().equals(r.tenant())) {
                    continue;
                }
                if (a.inScope().test(collection, r)) {
                    throw new ForgottenScopeException(
                            a.operation(), i, "it falls in the scope of a forget");
                }
                if (a.forgottenIds().contains(collection + '\0' + r.id())) {
                    throw new ForgottenScopeException(
                            a.operation(), i, "its id is that of a forgotten record");
                }
                for (String d : r.derivedFrom()) {
                    if (a.forgottenIds().contains(DerivedFromRef.read(d).key(collection))) {
                        throw new ForgottenScopeException(
                                a.operation(), i, "its derivedFrom names a forgotten record");
                    }
                }
            }
            if (!f.hashed().isEmpty()) {
                String op = fencedBy(f.hashed(), collection, r);
                if (op != null) {
                    throw new ForgottenScopeException(
                            op, i, "it, or a record it derives from, was forgotten");
                }
            }
        }
    }

    /** The sealed operations' fences: keyed hash to operation id (an immutable map). */
    Map<KeyedHash.Hash, String> sealed() {
        return fences.hashed();
    }

    /**
     * The sealed operations' fences that re-admissions lifted: keyed hash to what is left of it (an
     * immutable map).
     */
    Map<KeyedHash.Hash, Lifted> lifted() {
        return fences.lifted();
    }

    /**
     * The sealed operation whose keyed-hash fences name this record (or what it derives from), or
     * null.
     */
    String fencedBy(Map<KeyedHash.Hash, String> hashed, String collection, VectorRecord r) {
        return fencedBy(hashed, collection, r, null);
    }

    /**
     * As above, taking a subject's fence hash from {@code subjectFences} (tenant and subject to
     * hash, filled as it goes; null to hash every time): a pass over every record meets each
     * subject many times, and each hash is an HMAC.
     */
    String fencedBy(
            Map<KeyedHash.Hash, String> hashed,
            String collection,
            VectorRecord r,
            ConcurrentHashMap<List<String>, KeyedHash.Hash> subjectFences) {
        for (KeyedHash.Hash h : fenceHashes(collection, r, subjectFences)) {
            String op = hashed.get(h);
            if (op != null) {
                return op;
            }
        }
        return null;
    }

    /**
     * The sealed operation that erased this record although a re-admission lifted the fence that
     * names it: the record's version is below the floor the re-admission took in its collection, so
     * it was written before the forget (a restored copy, a lost journal). Null when none did.
     */
    String erasedBeforeReadmission(
            Map<KeyedHash.Hash, Lifted> lifted,
            String collection,
            String collectionId,
            VectorRecord r,
            long version,
            ConcurrentHashMap<List<String>, KeyedHash.Hash> subjectFences) {
        for (KeyedHash.Hash h : fenceHashes(collection, r, subjectFences)) {
            Lifted l = lifted.get(h);
            Long floor = l == null ? null : l.floors().get(collectionId);
            if (floor != null && version < floor) {
                return l.operation();
            }
        }
        return null;
    }

    /**
     * Every fence hash that could name this record: its subject, its source, its id and what it
     * derives from.
     */
    private List<KeyedHash.Hash> fenceHashes(
            String collection,
            VectorRecord r,
            ConcurrentHashMap<List<String>, KeyedHash.Hash> subjectFences) {
        List<KeyedHash.Hash> out = new ArrayList<>();
        if (r.subject() != null) {
            out.add(
                    subjectFences == null
                            ? hashes.fenceSubject(r.tenant(), r.subject())
                            : subjectFences.computeIfAbsent(
                                    List.of(r.tenant(), r.subject()),
                                    k -> hashes.fenceSubject(k.get(0), k.get(1))));
        }
        if (r.source() != null) {
            out.add(hashes.fenceSource(r.tenant(), r.source().kind(), r.source().id(), null));
            out.add(
                    hashes.fenceSource(
                            r.tenant(), r.source().kind(), r.source().id(), r.source().version()));
        }
        out.add(hashes.fenceRecord("*", r.tenant(), r.id()));
        out.add(hashes.fenceRecord(collection, r.tenant(), r.id()));
        for (String d : r.derivedFrom()) {
            DerivedFromRef source = DerivedFromRef.read(d);
            out.add(hashes.fenceRecord("*", r.tenant(), source.id()));
            out.add(
                    hashes.fenceRecord(
                            source.collection() == null ? collection : source.collection(),
                            r.tenant(),
                            source.id()));
        }
        return out;
    }

    /**
     * Rebuilds the fences from every operation and every complete re-admission and publishes them;
     * under the protocol's monitor. A fence lifted for one operation still stands for another that
     * left the same fence later (the subject forgotten again).
     */
    void refresh(
            Collection<LiveOperation> operations,
            Collection<OperationLog.StoredReadmission> readmissions) {
        Map<OperationLog.StoredReadmission.Lift, Map<String, Long>> liftedFloors = new HashMap<>();
        for (OperationLog.StoredReadmission r : readmissions) {
            if (r.complete()) {
                for (OperationLog.StoredReadmission.Lift l : r.lifts()) {
                    liftedFloors.merge(l, r.floors(), WriteFences::higherFloors);
                }
            }
        }
        List<Active> active = new ArrayList<>();
        Map<KeyedHash.Hash, String> hashed = new HashMap<>();
        Map<KeyedHash.Hash, Lifted> lifted = new HashMap<>();
        for (LiveOperation op : operations) {
            if (op.pub.state == OperationState.SEALED) {
                for (KeyedHash.Hash h : op.pub.fences) {
                    Map<String, Long> floors =
                            liftedFloors.get(new OperationLog.StoredReadmission.Lift(op.pub.id, h));
                    if (floors == null) {
                        hashed.put(h, op.pub.id);
                    } else {
                        lifted.merge(
                                h,
                                new Lifted(op.pub.id, floors),
                                (a, b) ->
                                        new Lifted(
                                                b.operation(),
                                                higherFloors(a.floors(), b.floors())));
                    }
                }
                continue;
            }
            Set<String> forgottenIds = new HashSet<>();
            for (OperationSecret.Forgotten f : op.secret.removed) {
                forgottenIds.add(f.collection() + '\0' + f.removed().record().id());
            }
            // Capture what the predicate reads: sealing replaces the operation's secret while a
            // writer may still hold these fences.
            OperationSecret secret = op.secret;
            Filter filter = op.filter;
            BiPredicate<String, VectorRecord> inScope =
                    (coll, r) ->
                            LiveOperation.scopeTest(secret, coll).test(r)
                                    || (filter != null && filter.test(r.metadata()));
            active.add(new Active(op.pub.id, op.pub.tenant, inScope, forgottenIds));
        }
        fences = new Fences(List.copyOf(active), Map.copyOf(hashed), Map.copyOf(lifted));
    }

    /**
     * Per collection, the higher of two floors: below it, every record was written before both
     * re-admissions.
     */
    private static Map<String, Long> higherFloors(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> out = new HashMap<>(a);
        b.forEach((k, v) -> out.merge(k, v, Math::max));
        return Map.copyOf(out);
    }
}
