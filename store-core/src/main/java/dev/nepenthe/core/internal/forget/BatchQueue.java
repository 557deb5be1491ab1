package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.OperationState;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The operations the forget worker has yet to advance, oldest first, and how it takes them: the
 * oldest operation, with every other operation of its tenant and erasure level waiting for the same
 * step, up to the bounds below. Two steps exist: cleanup (operations BLOCKED or in CLEANUP; holds
 * are checked on the way in) and verification with sealing (operations in VERIFYING). A batch never
 * joins two tenants: the tenant is the isolation boundary, so one tenant's receipt never cites a
 * check that covered another tenant's forgets, and a shared check that fails never holds up another
 * tenant's. Nor two erasure levels: a REPAIR forget never pays for a REBUILD's index rebuild.
 *
 * <p>Not thread-safe: the protocol calls it under its monitor.
 */
public final class BatchQueue {

    /**
     * At most this many operations advance together. A verification step verifies and seals its
     * operations one after another, each paying its own exact probe over the tenant (a scan of
     * every surviving record), and close waits for the step in progress; so the step is bounded by
     * operations too, not only by records, while a long queue still shares its cleanup passes.
     */
    public static final int MAX_OPERATIONS = 64;

    /**
     * At most this many records are removed or verified in one step, so one huge forget does not
     * hold the others back for long and the step's memory stays bounded. The removal holds the
     * collection's writer mutex while the index repairs itself (writes and the marks of new forgets
     * wait): the bound keeps that hold about as long as one forget of a thousand records (measured
     * in docs/BENCHMARKS.md, "Forget: time to BLOCKED and to SEALED"). The oldest operation goes,
     * however large, alone if it must; an operation that would take the step past the bound waits
     * for the next one with every younger operation, so no younger operation claims a record an
     * older one names (see {@link CleanupPhase}).
     */
    public static final int MAX_RECORDS = 1024;

    private final LinkedHashSet<String> waiting = new LinkedHashSet<>();

    /** Queues an operation for the worker (again, if it is queued already, in the same place). */
    void add(String id) {
        waiting.add(id);
    }

    /**
     * Takes the next batch: the oldest operation that still has a step to go, and the younger ones
     * that may join it. Operations with nothing left to do (settled, or stopped by a failure until
     * the next open) leave the queue here.
     *
     * @return the batch, oldest first; empty when nothing waits
     */
    List<LiveOperation> take(Map<String, LiveOperation> operations) {
        List<LiveOperation> batch = new ArrayList<>();
        LiveOperation first = null;
        int records = 0;
        for (Iterator<String> it = waiting.iterator();
                it.hasNext() && batch.size() < MAX_OPERATIONS; ) {
            LiveOperation op = operations.get(it.next());
            if (op == null || op.failure != null || step(op.pub.state) == null) {
                it.remove();
                continue;
            }
            if (first == null) {
                first = op;
            } else if (step(op.pub.state) != step(first.pub.state)
                    || !op.pub.tenant.equals(first.pub.tenant)
                    || op.pub.level != first.pub.level) {
                continue;
            }
            // A cleanup's records are known only once it resolves its scope: CleanupPhase keeps
            // that bound. A verification's are its removed records.
            if (step(op.pub.state) == OperationState.VERIFYING) {
                int n = op.secret.removed.size();
                if (!batch.isEmpty() && records + n > MAX_RECORDS) {
                    break;
                }
                records += n;
            }
            batch.add(op);
            it.remove();
        }
        return batch;
    }

    /** Puts operations back at the front of the queue, in the order given (they are the oldest). */
    void putBack(List<LiveOperation> ops) {
        if (ops.isEmpty()) {
            return;
        }
        LinkedHashSet<String> rest = new LinkedHashSet<>(waiting);
        waiting.clear();
        ops.forEach(op -> waiting.add(op.pub.id));
        waiting.addAll(rest);
    }

    /** The step an operation in this state waits for (CLEANUP or VERIFYING), or null for none. */
    private static OperationState step(OperationState s) {
        return switch (s) {
            case BLOCKED, CLEANUP -> OperationState.CLEANUP;
            case VERIFYING -> OperationState.VERIFYING;
            default -> null;
        };
    }
}
