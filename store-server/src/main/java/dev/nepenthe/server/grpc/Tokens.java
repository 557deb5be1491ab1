package dev.nepenthe.server.grpc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The bearer tokens a server accepts, read from a config file that holds only their SHA-256 hashes,
 * one per line:
 *
 * <pre>
 * # sha256 of the token            tenant   roles
 * sha256:9f86d0...                   acme     tenant
 * sha256:2c26b4...                   acme     tenant-admin
 * sha256:60303a...                   default  tenant,store-operator
 * </pre>
 *
 * The roles are those of {@link Role}; a line with several means the widest, and {@code operator}
 * (the old name) means {@code store-operator}. The file must be readable and writable by its owner
 * only, as ssh asks of a private key: whoever can write it can mint tokens, and whoever can read it
 * learns which tenants exist. A hash appears once (two lines with one hash would give one token two
 * meanings), and a tenant is a plain name.
 *
 * <p>A token (32 random bytes, base64url) is hashed when presented and compared with every entry in
 * constant time ({@link MessageDigest#isEqual}), all of them, so neither the comparison nor the
 * number of comparisons tells an attacker how close a guess was. The plaintext token exists only in
 * the file it is handed out in and in the caller's hands.
 */
final class Tokens {

    /**
     * One line of the file. A class, not a record: a record's equals and hashCode would take the
     * hash array by reference.
     */
    private static final class Entry {
        private final byte[] hash;
        private final String tenant;
        private final Role role;

        Entry(byte[] hash, String tenant, Role role) {
            this.hash = hash;
            this.tenant = tenant;
            this.role = role;
        }

        byte[] hash() {
            return hash;
        }

        String tenant() {
            return tenant;
        }

        Role role() {
            return role;
        }
    }

    /** What a tenant name may be: the store's own rule for tenants. */
    static final String TENANT_PATTERN = "[A-Za-z0-9._-]{1,128}";

    private final List<Entry> entries;

    private Tokens(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /**
     * Reads a tokens file; a bad line fails naming the file and the line number (never the hash or
     * a token), a file others may read or write fails naming its mode.
     */
    static Tokens read(Path file) throws IOException {
        requireOwnerOnly(file);
        List<Entry> out = new ArrayList<>();
        Map<String, Integer> lineOfHash = new HashMap<>();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+", -1); // stripped: no empty fields at either end
            String where = file + ":" + (i + 1);
            if (f.length != 3 || !f[0].startsWith("sha256:")) {
                throw new IllegalArgumentException(
                        where
                                + ": expected 'sha256:HEX TENANT ROLES', got "
                                + f.length
                                + " fields"
                                + (f.length > 0 && !f[0].startsWith("sha256:")
                                        ? " and no sha256: prefix"
                                        : ""));
            }
            byte[] hash;
            try {
                hash = HexFormat.of().parseHex(f[0].substring("sha256:".length()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        where + ": expected 64 hex digits after sha256:, got something else");
            }
            if (hash.length != 32) {
                throw new IllegalArgumentException(
                        where + ": expected 64 hex digits after sha256:, got " + hash.length * 2);
            }
            Integer first = lineOfHash.putIfAbsent(HexFormat.of().formatHex(hash), i + 1);
            if (first != null) {
                throw new IllegalArgumentException(
                        where
                                + ": expected each token hash once, got the hash of line "
                                + first
                                + " again (one token, two meanings; remove one line)");
            }
            if (!f[1].matches(TENANT_PATTERN)) {
                throw new IllegalArgumentException(
                        where
                                + ": expected a tenant of 1 to 128 letters, digits, '.', '_' or"
                                + " '-', got "
                                + quoted(f[1]));
            }
            Role role = null;
            for (String name : f[2].split(",", -1)) {
                Role r = Role.named(name);
                if (r == null) {
                    throw new IllegalArgumentException(
                            where + ": expected roles " + Role.NAMES + ", got " + quoted(name));
                }
                role = role == null || r.compareTo(role) > 0 ? r : role;
            }
            out.add(new Entry(hash, f[1], role));
        }
        return new Tokens(out);
    }

    /**
     * A field of a bad line as an error quotes it: in full only when it is too short to be a token
     * pasted into the wrong column (a token is 43 characters), else only its length.
     */
    private static String quoted(String field) {
        return field.length() <= 24
                ? "'" + field + "'"
                : "a field of "
                        + field.length()
                        + " characters (not quoted: it"
                        + " could be a token)";
    }

    /**
     * Refuses a tokens file its group or others may read or write (on a file system with POSIX
     * permissions; elsewhere the operator answers for it).
     */
    static void requireOwnerOnly(Path file) throws IOException {
        PosixFileAttributeView view =
                Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (view == null) {
            return;
        }
        Set<PosixFilePermission> mode = view.readAttributes().permissions();
        for (PosixFilePermission p :
                List.of(
                        PosixFilePermission.GROUP_READ,
                        PosixFilePermission.GROUP_WRITE,
                        PosixFilePermission.OTHERS_READ,
                        PosixFilePermission.OTHERS_WRITE)) {
            if (mode.contains(p)) {
                throw new IllegalArgumentException(
                        "tokens file "
                                + file
                                + " has mode "
                                + PosixFilePermissions.toString(mode)
                                + "; expected access for its owner only, since whoever can write it"
                                + " can mint tokens (chmod 600 "
                                + file
                                + ")");
            }
        }
    }

    /**
     * The caller a presented token belongs to, or empty. Costs one SHA-256 and a pass over every
     * entry.
     */
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
        return Optional.of(
                new Caller(
                        found.tenant(),
                        found.role(),
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
    static String line(String token, String tenant, Role role) {
        return "sha256:"
                + HexFormat.of().formatHex(sha256(token))
                + " "
                + tenant
                + " "
                + role.label();
    }

    /** The line for a tenant token, or a store operator's. */
    static String line(String token, String tenant, boolean operator) {
        return line(token, tenant, operator ? Role.STORE_OPERATOR : Role.TENANT);
    }

    /**
     * First start of a server with no tokens file: makes one token for the default tenant with the
     * store-operator role, writes its hash to {@code tokensFile} and the token itself to {@code
     * tokenFile}, both readable by the owner only. Returns the token file's path.
     */
    static Path bootstrap(Path tokensFile, Path tokenFile, String tenant) throws IOException {
        String token = newToken();
        Files.createDirectories(tokensFile.toAbsolutePath().getParent());
        writeOwnerOnly(
                tokensFile,
                "# Bearer tokens this server accepts: sha256 of the token, tenant, roles.\n"
                        + line(token, tenant, Role.STORE_OPERATOR)
                        + "\n");
        writeOwnerOnly(tokenFile, token + "\n");
        return tokenFile;
    }

    /**
     * A new token for a tenant: its hash appended to {@code tokensFile} (created, owner-only, if
     * missing; checked to parse first, so a bad file is not made worse), the token itself written
     * to the new file {@code tokenFile}, owner-only. A running server sees the change on the next
     * call.
     */
    static void add(Path tokensFile, Path tokenFile, String tenant, Role role) throws IOException {
        if (tenant == null || !tenant.matches(TENANT_PATTERN)) {
            throw new IllegalArgumentException(
                    "tenant: expected 1 to 128 letters, digits, '.', '_' or '-', got '"
                            + tenant
                            + "'");
        }
        if (Files.exists(tokenFile)) {
            throw new IllegalArgumentException(
                    "token file "
                            + tokenFile
                            + " exists; expected a new file (a token is"
                            + " never overwritten)");
        }
        String token = newToken();
        if (Files.exists(tokensFile)) {
            read(tokensFile);
            Files.writeString(
                    tokensFile,
                    line(token, tenant, role) + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);
        } else {
            Files.createDirectories(tokensFile.toAbsolutePath().getParent());
            writeOwnerOnly(
                    tokensFile,
                    "# Bearer tokens this server accepts: sha256 of the token, tenant, roles.\n"
                            + line(token, tenant, role)
                            + "\n");
        }
        writeOwnerOnly(tokenFile, token + "\n");
    }

    /**
     * Writes a new file readable and writable by its owner only (where the file system has POSIX
     * modes).
     */
    static void writeOwnerOnly(Path file, String text) throws IOException {
        Files.deleteIfExists(file);
        try {
            Files.createFile(
                    file,
                    PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
    }

    static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256")
                    .digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
