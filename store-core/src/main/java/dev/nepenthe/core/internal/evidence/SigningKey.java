package dev.nepenthe.core.internal.evidence;

import dev.nepenthe.core.CorruptFileException;
import dev.nepenthe.core.audit.Receipt;
import dev.nepenthe.core.internal.io.ChecksummedFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The store's Ed25519 signing key: signs every ledger entry and every receipt. The private key
 * rests in {@code signing.key}, encrypted (AES-GCM) under a key derived from the master key; the
 * public key is exported as PEM for auditors, who need nothing else to verify.
 */
public final class SigningKey {
    static final String FORMAT = "nepenthe-signing-key";
    static final int VERSION = 1;

    private final PrivateKey privateKey;
    private final PublicKey publicKey;

    private SigningKey(PrivateKey priv, PublicKey pub) {
        this.privateKey = priv;
        this.publicKey = pub;
    }

    /**
     * Loads {@code file}, or generates a key pair and writes it there if absent.
     *
     * @param wrappingKey 32 bytes derived from the master key
     */
    public static SigningKey loadOrCreate(Path file, byte[] wrappingKey) throws IOException {
        try {
            if (Files.exists(file)) {
                byte[][] parts =
                        ChecksummedFiles.read(
                                file,
                                FORMAT,
                                VERSION,
                                VERSION,
                                (in, v) -> {
                                    byte[] pub = new byte[in.readInt()];
                                    in.readFully(pub);
                                    byte[] nonce = new byte[12];
                                    in.readFully(nonce);
                                    byte[] wrapped = new byte[in.readInt()];
                                    in.readFully(wrapped);
                                    return new byte[][] {pub, nonce, wrapped};
                                });
                Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
                c.init(
                        Cipher.DECRYPT_MODE,
                        new SecretKeySpec(wrappingKey, "AES"),
                        new GCMParameterSpec(128, parts[1]));
                c.updateAAD(parts[0]);
                byte[] pkcs8;
                try {
                    pkcs8 = c.doFinal(parts[2]);
                } catch (GeneralSecurityException e) {
                    throw new CorruptFileException(
                            file, "signing key does not unwrap (wrong master key?)", e);
                }
                KeyFactory kf = KeyFactory.getInstance("Ed25519");
                return new SigningKey(
                        kf.generatePrivate(new PKCS8EncodedKeySpec(pkcs8)),
                        kf.generatePublic(new X509EncodedKeySpec(parts[0])));
            }
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] pub = pair.getPublic().getEncoded();
            byte[] nonce = new byte[12];
            new SecureRandom().nextBytes(nonce);
            Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
            c.init(
                    Cipher.ENCRYPT_MODE,
                    new SecretKeySpec(wrappingKey, "AES"),
                    new GCMParameterSpec(128, nonce));
            c.updateAAD(pub);
            byte[] wrapped = c.doFinal(pair.getPrivate().getEncoded());
            Files.createDirectories(file.toAbsolutePath().getParent());
            ChecksummedFiles.write(
                    file,
                    FORMAT,
                    VERSION,
                    ChecksummedFiles.newFileId(),
                    out -> {
                        out.writeInt(pub.length);
                        out.write(pub);
                        out.write(nonce);
                        out.writeInt(wrapped.length);
                        out.write(wrapped);
                    });
            return new SigningKey(pair.getPrivate(), pair.getPublic());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 or AES-GCM unavailable in this JVM", e);
        }
    }

    public byte[] sign(byte[] message) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(privateKey);
            s.update(message);
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed", e);
        }
    }

    public PublicKey publicKey() {
        return publicKey;
    }

    /** The public key as a PEM block ("-----BEGIN PUBLIC KEY-----"), for auditors. */
    public String publicKeyPem() {
        return toPem(publicKey);
    }

    static String toPem(PublicKey key) {
        return "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(key.getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
    }

    /** Reads a PEM public key as written by {@link #publicKeyPem()}. */
    public static PublicKey parsePem(String pem) {
        String b64 =
                pem.replace("-----BEGIN PUBLIC KEY-----", "")
                        .replace("-----END PUBLIC KEY-----", "")
                        .replaceAll("\\s", "");
        try {
            return KeyFactory.getInstance("Ed25519")
                    .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(b64)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "public key: expected a PEM-encoded Ed25519 key, got something else", e);
        }
    }

    /**
     * True if {@code signature} is a valid Ed25519 signature of {@code message} under {@code key}.
     */
    public static boolean verify(PublicKey key, byte[] message, byte[] signature) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(message);
            return s.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /**
     * Signs {@code fields} as a receipt document (canonical JSON, {@link Receipt#SEPARATOR}, the
     * Ed25519 signature in base64), which {@link Receipt#verify} checks offline.
     */
    public String issueReceipt(Map<String, Object> fields) {
        String json = CanonicalJson.encode(fields);
        byte[] sig = sign(json.getBytes(StandardCharsets.UTF_8));
        return json + Receipt.SEPARATOR + Base64.getEncoder().encodeToString(sig) + "\n";
    }
}
