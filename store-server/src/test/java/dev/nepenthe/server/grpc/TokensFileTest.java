package dev.nepenthe.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tokens file's refusals (issue 47): a file its group or others may read or write, a hash given
 * twice, a tenant that is not a plain name, an unknown role; each names the file and the line or
 * the mode, and none quotes a token or a hash. Old role names still read.
 */
class TokensFileTest {

    @TempDir Path tmp;

    private static String hash(String token) {
        return "sha256:" + HexFormat.of().formatHex(Tokens.sha256(token));
    }

    private Path file(String text) throws Exception {
        Path f = tmp.resolve("tokens-" + System.nanoTime() + ".conf");
        Tokens.writeOwnerOnly(f, text);
        return f;
    }

    private static String refusal(Path f) {
        return assertThrows(IllegalArgumentException.class, () -> Tokens.read(f)).getMessage();
    }

    @Test
    void aFileOthersMayReadOrWriteIsRefusedNamingItsMode() throws Exception {
        String token = Tokens.newToken();
        Path f = file(Tokens.line(token, "acme", false) + "\n");
        assertEquals(1, Tokens.read(f).size(), "the control: owner-only reads");
        for (String mode : new String[] {"rw-r--r--", "rw--w----", "rw----r--", "rw-rw-rw-"}) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
            String m = refusal(f);
            assertTrue(m.contains(f.toString()) && m.contains(mode) && m.contains("chmod 600"), m);
        }
    }

    @Test
    void badLinesAreRefusedByLineNumberWithoutQuotingATokenOrAHash() throws Exception {
        String a = Tokens.newToken();
        String b = Tokens.newToken();
        String dup =
                refusal(
                        file(
                                "# tokens\n"
                                        + Tokens.line(a, "acme", false)
                                        + "\n"
                                        + hash(a)
                                        + " globex tenant\n"));
        assertTrue(dup.contains(":3:") && dup.contains("line 2"), dup);
        String badTenant =
                refusal(file(Tokens.line(a, "acme", false) + "\n" + hash(b) + " ac/me tenant\n"));
        assertTrue(badTenant.contains(":2:") && badTenant.contains("'ac/me'"), badTenant);
        // A token pasted into the tenant or the roles column: refused, and never quoted.
        String pastedTenant = refusal(file(hash(a) + " " + b + "$ tenant\n"));
        String pastedRole = refusal(file(hash(a) + " acme " + b + "\n"));
        String unknownRole = refusal(file(hash(a) + " acme tenant,root\n"));
        assertTrue(unknownRole.contains("'root'") && unknownRole.contains(":1:"), unknownRole);
        for (String m : new String[] {dup, badTenant, pastedTenant, pastedRole, unknownRole}) {
            assertFalse(m.contains(a) || m.contains(b), "a token quoted: " + m);
            assertFalse(
                    m.contains(hash(a).substring(7)) || m.contains(hash(b).substring(7)),
                    "a hash quoted: " + m);
        }
    }

    @Test
    void eachRoleReadsAndTheOldOperatorNameMeansStoreOperator() throws Exception {
        String t = Tokens.newToken();
        String admin = Tokens.newToken();
        String old = Tokens.newToken();
        String ops = Tokens.newToken();
        Tokens tokens =
                Tokens.read(
                        file(
                                Tokens.line(t, "acme", Role.TENANT)
                                        + "\n"
                                        + Tokens.line(admin, "acme", Role.TENANT_ADMIN)
                                        + "\n"
                                        + hash(old)
                                        + " default tenant,operator\n"
                                        + Tokens.line(ops, "default", Role.STORE_OPERATOR)
                                        + "\n"));
        assertEquals(Role.TENANT, tokens.authenticate(t).orElseThrow().role());
        assertEquals(Role.TENANT_ADMIN, tokens.authenticate(admin).orElseThrow().role());
        assertEquals(Role.STORE_OPERATOR, tokens.authenticate(old).orElseThrow().role());
        assertEquals(Role.STORE_OPERATOR, tokens.authenticate(ops).orElseThrow().role());
        assertTrue(tokens.authenticate(Tokens.newToken()).isEmpty());
    }
}
