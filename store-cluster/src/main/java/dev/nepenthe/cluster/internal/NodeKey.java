package dev.nepenthe.cluster.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;

/**
 * A replica's own Ed25519 key: it signs the replica's attestations, and its public half is recorded
 * in the cluster's ledger when the replica joins, so a receipt verifies offline. Kept apart from
 * the store's key (which signs the replica's local receipts) so the cluster can sign what the store
 * knows nothing of: the group, the log index and the operation it attests.
 */
public final class NodeKey {

    private static final String ALGORITHM = "Ed25519";

    private final PrivateKey privateKey;
    private final PublicKey publicKey;

    private NodeKey(PrivateKey privateKey, PublicKey publicKey) {
        this.privateKey = privateKey;
        this.publicKey = publicKey;
    }

    /**
     * The key in {@code file}, made (readable by its owner only) when there is none.
     *
     * @param file the key file (PKCS#8 private key, then the X.509 public key, base64 lines)
     * @return the key
     * @throws IOException if the file cannot be read or written, or does not hold a key
     */
    public static NodeKey loadOrCreate(Path file) throws IOException {
        if (!Files.exists(file)) {
            try {
                KeyPair pair = KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
                String text =
                        Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded())
                                + "\n"
                                + Base64.getEncoder().encodeToString(pair.getPublic().getEncoded())
                                + "\n";
                Files.createDirectories(file.getParent());
                Path tmp = file.resolveSibling(file.getFileName() + ".new");
                Files.deleteIfExists(tmp);
                Files.createFile(
                        tmp,
                        PosixFilePermissions.asFileAttribute(
                                PosixFilePermissions.fromString("rw-------")));
                Files.writeString(tmp, text, StandardCharsets.US_ASCII);
                Durable.force(tmp);
                Files.move(tmp, file);
                Durable.forceDirectory(file.getParent());
            } catch (FileAlreadyExistsException e) {
                // made meanwhile by another start: read that one
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("this JDK has no Ed25519", e);
            }
        }
        String[] lines = Files.readString(file, StandardCharsets.US_ASCII).strip().split("\n", -1);
        if (lines.length != 2) {
            throw new IOException(
                    file
                            + ": expected two base64 lines (private key, public key), got "
                            + lines.length);
        }
        try {
            KeyFactory f = KeyFactory.getInstance(ALGORITHM);
            byte[] priv = Base64.getDecoder().decode(lines[0]);
            PrivateKey privateKey = f.generatePrivate(new PKCS8EncodedKeySpec(priv));
            Arrays.fill(priv, (byte) 0);
            return new NodeKey(privateKey, publicKey(lines[1]));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IOException(
                    file + ": expected an Ed25519 key pair, got bytes that are not", e);
        }
    }

    /**
     * The public key from its base64 X.509 form.
     *
     * @param base64 the encoded key
     * @return the key
     * @throws IllegalArgumentException if it is not an Ed25519 public key
     */
    public static PublicKey publicKey(String base64) {
        try {
            return KeyFactory.getInstance(ALGORITHM)
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "expected a base64 X.509 Ed25519 public key, got "
                            + base64.length()
                            + " characters that are not one",
                    e);
        }
    }

    /**
     * The public half, base64 X.509: what the ledger records.
     *
     * @return the encoded public key
     */
    public String publicBase64() {
        return Base64.getEncoder().encodeToString(publicKey.getEncoded());
    }

    /**
     * Signs text.
     *
     * @param text what to sign (UTF-8)
     * @return the base64 signature
     */
    public String sign(String text) {
        try {
            Signature s = Signature.getInstance(ALGORITHM);
            s.initSign(privateKey);
            s.update(text.getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(s.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed", e);
        }
    }

    /**
     * Whether a signature over text verifies under a public key.
     *
     * @param key the signer's public key
     * @param text the signed text
     * @param signature the base64 signature
     * @return true when it verifies
     */
    public static boolean verify(PublicKey key, String text, String signature) {
        try {
            Signature s = Signature.getInstance(ALGORITHM);
            s.initVerify(key);
            s.update(text.getBytes(StandardCharsets.UTF_8));
            return s.verify(Base64.getDecoder().decode(signature));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }
}
