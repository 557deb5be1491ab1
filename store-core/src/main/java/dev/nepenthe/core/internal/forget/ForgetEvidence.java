package dev.nepenthe.core.internal.forget;

import dev.nepenthe.core.audit.LedgerEntry;
import dev.nepenthe.core.forget.SurfaceOutcome;
import dev.nepenthe.core.internal.crypto.KeyedHash;
import dev.nepenthe.core.internal.evidence.SigningKey;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a forget operation writes into the evidence ledger and its receipt: keyed hashes, codes,
 * counts, states, times and residual statements, never content, vectors or other records' ids.
 */
final class ForgetEvidence {

    /** The policy every ledger entry and receipt names: the protocol's rules, versioned. */
    static final String POLICY = "nepenthe-forget/1";

    private final KeyedHash hashes;
    private final SigningKey signer;

    ForgetEvidence(KeyedHash hashes, SigningKey signer) {
        this.hashes = hashes;
        this.signer = signer;
    }

    /**
     * The ledger entry body for an operation reaching {@code event} ("held", "needs-review",
     * "sealed").
     */
    Map<String, Object> body(OperationLog.Public op, String event, String overrideReason) {
        return body(op, event, overrideReason, null);
    }

    /**
     * The ledger entry body, citing the checks the operation's verification shared with other
     * operations of its batch ({@code batch} null: none).
     */
    Map<String, Object> body(
            OperationLog.Public op, String event, String overrideReason, BatchCitation batch) {
        Map<String, Object> b = new TreeMap<>();
        b.put("type", "forget");
        b.put("event", event);
        b.put("operation", op.id);
        b.put("tenant", hex(hashes.tenant(op.tenant)));
        b.put("scope", Map.of("kind", op.scopeKind, "hash", hex(op.scopeHash)));
        b.put("reason", op.reasonCode);
        b.put("level", op.level.name());
        b.put("state", op.state.name());
        b.put("states", states(op));
        b.put("records", op.forgotten.values().stream().mapToInt(Integer::intValue).sum());
        b.put("recordsPerCollection", new TreeMap<>(op.forgotten));
        b.put("surfaces", surfaces(op));
        b.put("suspects", op.suspects);
        b.put("probeThreshold", Double.toString(op.threshold));
        b.put("probe", probe(op));
        b.put("holds", List.copyOf(op.holds));
        b.put("outcome", op.outcome);
        b.put("declaredIdentifiers", op.identifiers);
        b.put("identifiersSought", sought(op));
        b.put("policy", ForgetEvidence.POLICY);
        if (overrideReason != null) {
            b.put("override", Map.of("reason", overrideReason, "suspectsOverridden", op.suspects));
        }
        if (batch != null) {
            b.put("batch", batch.evidence());
        }
        return b;
    }

    /**
     * The signed receipt of a sealed operation, pointing at its ledger entry and citing the checks
     * its verification shared with other operations of its batch ({@code batch} null: none; the key
     * is then absent, as in receipts from before batches).
     */
    String receipt(
            OperationLog.Public op, LedgerEntry entry, String overrideReason, BatchCitation batch) {
        Map<String, Object> r = new TreeMap<>();
        r.put("receipt", "nepenthe-erasure-receipt/1");
        r.put("operation", op.id);
        r.put("tenant", hex(hashes.tenant(op.tenant)));
        r.put("scope", Map.of("kind", op.scopeKind, "hash", hex(op.scopeHash)));
        r.put("reason", op.reasonCode);
        r.put("level", op.level.name());
        r.put("states", states(op));
        r.put("records", op.forgotten.values().stream().mapToInt(Integer::intValue).sum());
        r.put("outcome", op.outcome);
        r.put("tenantKnown", op.tenantKnown);
        r.put("surfaces", surfaces(op));
        r.put("probe", probe(op));
        r.put("identifiersSought", sought(op));
        List<Object> residual = new ArrayList<>();
        for (SurfaceOutcome s : op.surfaces) {
            if (s.residual() != null) {
                residual.add(s.surface() + ": " + s.residual());
            }
        }
        r.put("residual", residual);
        // The epoch is named once an operator has restarted a damaged ledger (see FORGET.md).
        r.put(
                "ledgerEntry",
                op.ledgerEpoch == 0
                        ? Map.of("seq", entry.seq(), "hash", entry.hashHex())
                        : Map.of(
                                "epoch",
                                op.ledgerEpoch,
                                "seq",
                                entry.seq(),
                                "hash",
                                entry.hashHex()));
        r.put("publicKey", fingerprint(signer));
        r.put("policy", ForgetEvidence.POLICY);
        r.put("override", overrideReason);
        if (batch != null) {
            r.put("batch", batch.evidence());
        }
        return signer.issueReceipt(r);
    }

    private static Map<String, Object> states(OperationLog.Public op) {
        Map<String, Object> states = new TreeMap<>();
        op.timeline.forEach(
                (s, t) -> states.put(s.name(), Instant.EPOCH.plusNanos(t * 1000).toString()));
        return states;
    }

    /**
     * Which negative-space probe ran where: the threshold, whether the request forced the exact
     * probe, the policy's size above which it searches an index (null: never), and per collection
     * the probe's mode, why it was exact or the parameters it searched with, and what it compared.
     */
    private static Map<String, Object> probe(OperationLog.Public op) {
        Map<String, Object> p = new TreeMap<>();
        p.put("threshold", Double.toString(op.threshold));
        p.put("exactForced", op.exactProbe);
        p.put(
                "approximateAbove",
                op.approximateAbove == Integer.MAX_VALUE ? null : op.approximateAbove);
        p.put("collections", op.probes.stream().map(ProbeRun::evidence).toList());
        return p;
    }

    /**
     * The subject identifiers the verification looked for in the survivors: per identifier its
     * keyed hash (never the identifier) and where it came from ({@code request}, or {@code
     * <collection>/<metadata key>} for one read from the subject's records).
     */
    private static List<Object> sought(OperationLog.Public op) {
        List<Object> out = new ArrayList<>();
        for (OperationLog.Sought s : op.sought) {
            out.add(Map.of("hash", hex(s.hash()), "source", s.source()));
        }
        return out;
    }

    private static List<Object> surfaces(OperationLog.Public op) {
        List<Object> out = new ArrayList<>();
        for (SurfaceOutcome s : op.surfaces) {
            Map<String, Object> m = new TreeMap<>();
            m.put("name", s.surface());
            m.put("class", s.erasureClass().name());
            m.put("purged", s.purged());
            m.put("checked", s.checked());
            m.put("clean", s.clean());
            m.put("problems", s.problems().size());
            m.put("residual", s.residual());
            out.add(m);
        }
        return out;
    }

    /**
     * "sha256:" and the hex SHA-256 of the encoded public key, as receipts name the key that signed
     * them.
     */
    static String fingerprint(SigningKey key) {
        try {
            return "sha256:"
                    + HexFormat.of()
                            .formatHex(
                                    MessageDigest.getInstance("SHA-256")
                                            .digest(key.publicKey().getEncoded()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String hex(KeyedHash.Hash h) {
        return HexFormat.of().formatHex(h.bytes());
    }
}
