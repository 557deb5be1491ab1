package dev.nepenthe.cluster.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.HexFormat;

/**
 * One replica's word on its part of a replicated forget: the state its own operation reached and
 * its local receipt (signed by its store key), bound by its node key to the group, the operation
 * and the log index it attests. It holds no subject data: the local receipt holds keyed hashes
 * only.
 *
 * @param group the Raft group's id
 * @param operation the replicated operation's id ({@code cfop-...})
 * @param index the log index of the forget
 * @param node the attesting replica
 * @param state the state its operation reached (SEALED, NEEDS_REVIEW, COMPLETED_WITH_EXCEPTION)
 * @param localReceipt the replica's signed local receipt, empty when it has none
 * @param signature the node key's base64 signature over {@link #text()}
 */
public record Attestation(
        String group,
        String operation,
        long index,
        String node,
        String state,
        String localReceipt,
        String signature) {

    /**
     * What the node key signs: every field but the signature, the receipt by its SHA-256.
     *
     * @return the signed text
     */
    public String text() {
        return "nepenthe-attestation v1\ngroup "
                + group
                + "\noperation "
                + operation
                + "\nindex "
                + index
                + "\nnode "
                + node
                + "\nstate "
                + state
                + "\nreceipt-sha256 "
                + sha256(localReceipt)
                + "\n";
    }

    /**
     * Whether the signature verifies under the node's key.
     *
     * @param nodeKey the key the ledger recorded for {@link #node}
     * @return true when it verifies
     */
    public boolean verifies(PublicKey nodeKey) {
        return NodeKey.verify(nodeKey, text(), signature);
    }

    static Attestation signed(
            NodeKey key,
            String group,
            String operation,
            long index,
            String node,
            String state,
            String localReceipt) {
        Attestation unsigned =
                new Attestation(group, operation, index, node, state, localReceipt, "");
        return new Attestation(
                group, operation, index, node, state, localReceipt, key.sign(unsigned.text()));
    }

    static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(
                            MessageDigest.getInstance("SHA-256")
                                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no SHA-256", e);
        }
    }
}
