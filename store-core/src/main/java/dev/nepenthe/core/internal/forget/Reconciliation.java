package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.internal.crypto.KeyedHash;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

/**
 * Reconciliation at open: re-verifies sealed operations against the live records. Any record a
 * sealed operation's fences name (a restored snapshot or a lost journal brought it back) is removed
 * again, and the removal is recorded as evidence, or counted when the ledger is damaged. A fence a
 * re-admission lifted still removes a record it names whose version is below the floor the
 * re-admission took: that record is from before the forget; one above it was written after.
 */
final class Reconciliation {

    private static final System.Logger LOG = System.getLogger(Reconciliation.class.getName());

    private final ForgetContext ctx;

    Reconciliation(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /** Records removed again, and collections whose check a clean close's stamp let it skip. */
    record Result(int removed, int skipped) {}

    /**
     * Re-verifies sealed operations against the live records: any record a sealed operation's
     * fences name is removed again, and the removal is recorded as ctx.evidence. A collection
     * opened over exactly the files its last clean close left, under the same fences ({@code
     * cleanClose}: incarnation id to that close's manifest digest, see {@link
     * ReconciliationStamp}), is skipped: it holds no such record.
     */
    Result reconcile(Map<String, byte[]> cleanClose) throws IOException {
        Map<KeyedHash.Hash, String> hashed = ctx.fences.sealed();
        Map<KeyedHash.Hash, WriteFences.Lifted> lifted = ctx.fences.lifted();
        if (hashed.isEmpty() && lifted.isEmpty()) {
            return new Result(0, 0);
        }
        int removed = 0;
        int skipped = 0;
        // Filled from several threads: the test runs over the records in parallel.
        Set<String> operations = new ConcurrentSkipListSet<>();
        // Each subject's fence hash once per pass, not once per record; dropped with the pass.
        ConcurrentHashMap<List<String>, KeyedHash.Hash> subjectFences = new ConcurrentHashMap<>();
        for (CollectionEraser c : ctx.collections()) {
            String collectionId = c.engine().id();
            // Were the journal lost, this open would number writes from the restored files' highest
            // version, maybe below a floor: a record written now would read as one from before.
            long highestFloor =
                    lifted.values().stream()
                            .map(l -> l.floors().get(collectionId))
                            .filter(Objects::nonNull)
                            .mapToLong(Long::longValue)
                            .max()
                            .orElse(-1);
            if (highestFloor >= 0) {
                c.ensureVersionAbove(highestFloor);
            }
            byte[] closedWith = cleanClose.get(collectionId);
            if (closedWith != null
                    && Arrays.equals(
                            closedWith, c.engine().storage().manifestIfOpenedUnchanged())) {
                skipped++;
                continue;
            }
            removed +=
                    c.removeWhere(
                            (r, version) -> {
                                String op = ctx.fences.fencedBy(hashed, c.name(), r, subjectFences);
                                if (op == null && !lifted.isEmpty()) {
                                    op =
                                            ctx.fences.erasedBeforeReadmission(
                                                    lifted,
                                                    c.name(),
                                                    collectionId,
                                                    r,
                                                    version,
                                                    subjectFences);
                                }
                                if (op != null) {
                                    operations.add(op);
                                    return true;
                                }
                                return false;
                            });
        }
        if (removed > 0 && ctx.ledger.problem() != null) {
            // Removing what came back is never wrong; its evidence waits for a sound ctx.ledger.
            ctx.ledger.countUnrecorded(removed);
            LOG.log(
                    Level.WARNING,
                    "reconciliation removed {0} records that sealed forget operations had erased;"
                            + " the evidence ledger is damaged, so no entry records it",
                    removed);
        } else if (removed > 0) {
            Map<String, Object> body = new TreeMap<>();
            body.put("type", "reconciliation");
            body.put("removed", removed);
            body.put("operations", List.copyOf(operations));
            body.put("policy", ForgetEvidence.POLICY);
            ctx.appendEvidence(body);
            LOG.log(
                    Level.WARNING,
                    "reconciliation removed {0} records that sealed forget operations had erased"
                            + " (a restored snapshot or a lost journal brought them back)",
                    removed);
        }
        return new Result(removed, skipped);
    }
}
