package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.Filter;
import dev.nepenthe.core.VectorRecord;
import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ForgetScope;
import dev.nepenthe.core.forget.ForgottenRecords;
import dev.nepenthe.core.forget.OperationState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * One forget operation as this process holds it: its public part (what the operation log and the
 * ledger may hold: keyed hashes, counts, states, times), its private part while it is unsealed
 * (scope, probe vectors, suspects; sealed under the operation's own key on disk), and what only
 * memory knows (a metadata scope's live filter, a failure, the blocked scope for surfaces that
 * register late). Fields change under the protocol's monitor.
 */
final class LiveOperation {
    final OperationLog.Public pub;
    OperationSecret secret;

    /** The live filter of a metadata scope, for fencing while this process runs. */
    Filter filter;

    String failure;

    /**
     * Sealed, but the collections and surfaces have not dropped its blocks yet: not settled for
     * waiters.
     */
    boolean releasing;

    /**
     * What the mark blocked, for surfaces registered while the operation is unsealed (memory only).
     */
    BlockedScope blocked;

    /**
     * The checks its last verification shared with other operations of a batch, or null (memory
     * only).
     */
    BatchCitation batch;

    /**
     * Surfaces whose block failed: they may have kept serving the scope, so the operation cannot
     * seal.
     */
    final Map<String, String> blockFailures = new ConcurrentHashMap<>();

    LiveOperation(OperationLog.Public pub, OperationSecret secret) {
        this.pub = pub;
        this.secret = secret;
    }

    String id() {
        return pub.id;
    }

    /** Moves to a state and stamps the timeline (the caller saves). */
    void enter(OperationState s) {
        pub.state = s;
        pub.timeline.put(s, nowMicros());
    }

    /** Which records of a collection the operation's scope names. */
    Predicate<VectorRecord> scopeTest(String collection) {
        return scopeTest(secret, collection);
    }

    /**
     * Which records of a collection a private part's scope names: the ids a metadata scope was
     * resolved to at the mark, otherwise the scope itself.
     */
    static Predicate<VectorRecord> scopeTest(OperationSecret secret, String collection) {
        Map<String, Set<String>> resolved = secret.resolved;
        if (resolved != null) {
            Set<String> ids = resolved.getOrDefault(collection, Set.of());
            return r -> ids.contains(r.id());
        }
        ForgetScope scope = secret.scope;
        return scope == null ? r -> false : scope::matches;
    }

    /**
     * The subject of a subject scope (collections find it through their subject bitmap), else null.
     */
    String subjectHint() {
        return secret.scope instanceof ForgetScope.Subject s ? s.subject() : null;
    }

    /**
     * What the surfaces are told was forgotten: copies of the removed vectors, wiped after each
     * call.
     */
    ForgottenRecords forgottenRecords() {
        List<ForgottenRecords.Item> items = new ArrayList<>();
        for (OperationSecret.Forgotten f : secret.removed) {
            items.add(
                    new ForgottenRecords.Item(
                            f.collection(),
                            f.removed().record().id(),
                            f.removed().ordinal(),
                            f.removed().record().vector()));
        }
        return new ForgottenRecords(pub.id, pub.tenant, subjectHint(), items);
    }

    /** The vector copies handed to surfaces are wiped once they have been called. */
    static void wipe(ForgottenRecords forgotten) {
        for (ForgottenRecords.Item i : forgotten.items()) {
            Arrays.fill(i.vector(), 0f);
        }
    }

    static long nowMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }
}
