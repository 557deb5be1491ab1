package dev.nepenthe.cluster;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TLS between replicas, both ways (each side proves itself to the other), and on the replica's
 * client API: this replica's certificate chain and private key, and the certificates it trusts
 * (every other member's, or the authority that signed them).
 *
 * @param certChain PEM certificate chain of this replica
 * @param privateKey PEM PKCS#8 private key of this replica
 * @param trusted PEM certificates this replica accepts from the others
 */
public record NodeTls(Path certChain, Path privateKey, Path trusted) {

    /**
     * Checks the three files exist.
     *
     * @throws IllegalArgumentException if one is missing, naming it
     */
    public NodeTls {
        for (Path p : new Path[] {certChain, privateKey, trusted}) {
            if (p == null || !Files.isRegularFile(p)) {
                throw new IllegalArgumentException(
                        "TLS: expected a PEM file, got "
                                + (p == null ? "none" : "'" + p + "', which is not a file"));
            }
        }
    }
}
