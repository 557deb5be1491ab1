package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.forget.BlockedScope;
import dev.nepenthe.core.forget.ErasureSurface;
import dev.nepenthe.core.forget.Suspect;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The block phase (the mark; the operation is BLOCKED after it): every collection hides an
 * operation's scope from every read, then every registered surface blocks it. A surface whose block
 * fails is remembered: it may have kept serving the scope, so the operation cannot seal.
 */
final class BlockPhase {

    private static final System.Logger LOG = System.getLogger(BlockPhase.class.getName());

    private final ForgetContext ctx;

    BlockPhase(ForgetContext ctx) {
        this.ctx = ctx;
    }

    /** The mark: every collection hides the scope, then every registered surface blocks it. */
    void blockEverywhere(LiveOperation op) {
        Map<String, Set<String>> ids = new HashMap<>();
        for (CollectionEraser c : ctx.collections()) {
            Set<String> hidden =
                    new HashSet<>(
                            c.block(
                                    op.pub.id,
                                    op.pub.tenant,
                                    op.scopeTest(c.name()),
                                    op.subjectHint()));
            for (Suspect s : op.secret.suspects) {
                if (s.reason().equals("regeneration-required") && s.collection().equals(c.name())) {
                    hidden.addAll(
                            c.block(
                                    op.pub.id,
                                    op.pub.tenant,
                                    r -> r.id().equals(s.recordId()),
                                    null));
                }
            }
            // Records the cleanup already removed stay blocked too (a resumed operation).
            for (OperationSecret.Forgotten f : op.secret.removed) {
                if (f.collection().equals(c.name())) {
                    hidden.add(f.removed().record().id());
                }
            }
            if (!hidden.isEmpty()) {
                ids.put(c.name(), hidden);
            }
        }
        BlockedScope scope = new BlockedScope(op.pub.id, op.pub.tenant, op.subjectHint(), ids);
        synchronized (ctx.monitor) {
            op.blocked = scope;
        }
        for (ErasureSurface s : ctx.surfaces) {
            blockOn(s, op, scope);
        }
    }

    void blockOn(ErasureSurface s, LiveOperation op, BlockedScope scope) {
        try {
            ctx.atSurface(
                    () -> {
                        s.block(scope);
                        return null;
                    });
        } catch (IOException | RuntimeException e) {
            // Never the scope or the message (a surface's message may quote what it holds).
            op.blockFailures.put(s.name(), e.getClass().getSimpleName());
            LOG.log(
                    Level.ERROR,
                    "erasure surface "
                            + s.name()
                            + " failed to block forget operation "
                            + op.pub.id
                            + " ("
                            + e.getClass().getSimpleName()
                            + "): it may serve the scope; the operation cannot seal");
        }
    }
}
