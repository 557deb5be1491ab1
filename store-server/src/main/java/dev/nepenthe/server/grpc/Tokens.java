package dev.nepenthe.server.grpc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The bearer tokens a server accepts, read from a config file that holds only their SHA-256
 * hashes, one per line:
 *
 * <pre>
 * # sha256 of the token            tenant   roles
 * sha256:9f86d0...                   acme     tenant
 * sha256:60303a...                   default  tenant,operator
 * </pre>
 *
 * A token (32 random bytes, base64url) is hashed when presented and compared with every entry in
 * constant time ({@link MessageDigest#isEqual}), all of them, so neither the comparison nor the
 * number of comparisons tells an attacker how close a guess was. The plaintext token exists only
 * in the file it is handed out in and in the caller's hands.
 */
final class Tokens {

    private record Entry(byte[] hash, String tenant, boolean operator) {}

    private final List<Entry> entries;

    private Tokens(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /** Reads a tokens file; a bad line fails naming the file and the line number. */
    static Tokens read(Path file) throws IOException {
        List<Entry> out = new ArrayList<>();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            String where = file + ":" + (i + 1);
            if (f.length != 3 || !f[0].startsWith("sha256:")) {
                throw new IllegalArgumentException(where + ": expected 'sha256:HEX TENANT ROLES', got " + f.length
                        + " fields" + (f.length > 0 && !f[0].startsWith("sha256:") ? " and no sha256: prefix" : ""));
            }
            byte[] hash;
            try {
                hash = HexFormat.of().parseHex(f[0].substring("sha256:".length()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": expected 64 hex digits after sha256:, got something else");
            }
            if (hash.length != 32) {
                throw new IllegalArgumentException(where + ": expected 64 hex digits after sha256:, got " + hash.length * 2);
            }
            boolean operator = false;
            for (String role : f[2].split(",")) {
                switch (role) {
                    case "tenant" -> { }
                    case "operator" -> operator = true;
                    default -> throw new IllegalArgumentException(where + ": expected roles 'tenant' and/or 'operator',"
                            + " got '" + role + "'");
                }
            }
            out.add(new Entry(hash, f[1], operator));
        }
        return new Tokens(out);
    }

    /** The caller a presented token belongs to, or empty. Costs one SHA-256 and a pass over every entry. */
    Optional<Caller> authenticate(String token) {
        byte[] presented = sha256(token);
        Entry found = null;
        for (Entry e : entries) {
            // No early exit: every entry is compared, whatever matched.
            if (MessageDigest.isEqual(e.hash(), presented) && found == null) {
                found = e;
            }
        }
        if (found == null) {
            return Optional.empty();
        }
        return Optional.of(new Caller(found.tenant(), found.operator(),
                HexFormat.of().formatHex(found.hash(), 0, 4)));
    }

    int size() {
        return entries.size();
    }

    /** A fresh token: 32 random bytes, base64url without padding. */
    static String newToken() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** The line a tokens file holds for a token. */
    static String line(String token, String tenant, boolean operator) {
        return "sha256:" + HexFormat.of().formatHex(sha256(token)) + " " + tenant + " " + (operator ? "tenant,operator" : "tenant");
    }

    /**
     * First start of a server with no tokens file: makes one token for the default tenant with
     * the operator role, writes its hash to {@code tokensFile} and the token itself to
     * {@code tokenFile}, both readable by the owner only. Returns the token file's path.
     */
    static Path bootstrap(Path tokensFile, Path tokenFile, String tenant) throws IOException {
        String token = newToken();
        Files.createDirectories(tokensFile.toAbsolutePath().getParent());
        writeOwnerOnly(tokensFile, "# Bearer tokens this server accepts: sha256 of the token, tenant, roles.\n"
                + line(token, tenant, true) + "\n");
        writeOwnerOnly(tokenFile, token + "\n");
        return tokenFile;
    }

    /**
     * A new token for a tenant: its hash appended to {@code tokensFile} (created, owner-only, if
     * missing; checked to parse first, so a bad file is not made worse), the token itself written
     * to the new file {@code tokenFile}, owner-only. A running server reads the tokens file when it
     * starts.
     */
    static void add(Path tokensFile, Path tokenFile, String tenant, boolean operator) throws IOException {
        if (tenant == null || !tenant.matches("[A-Za-z0-9._-]{1,128}")) {
            throw new IllegalArgumentException("tenant: expected 1 to 128 letters, digits, '.', '_' or '-', got '"
                    + tenant + "'");
        }
        if (Files.exists(tokenFile)) {
            throw new IllegalArgumentException("token file " + tokenFile + " exists; expected a new file (a token is"
                    + " never overwritten)");
        }
        String token = newToken();
        if (Files.exists(tokensFile)) {
            read(tokensFile);
            Files.writeString(tokensFile, line(token, tenant, operator) + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);
        } else {
            Files.createDirectories(tokensFile.toAbsolutePath().getParent());
            writeOwnerOnly(tokensFile, "# Bearer tokens this server accepts: sha256 of the token, tenant, roles.\n"
                    + line(token, tenant, operator) + "\n");
        }
        writeOwnerOnly(tokenFile, token + "\n");
    }

    private static void writeOwnerOnly(Path file, String text) throws IOException {
        Files.deleteIfExists(file);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
    }

    static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
