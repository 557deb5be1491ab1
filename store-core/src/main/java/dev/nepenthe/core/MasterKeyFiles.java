package dev.nepenthe.core;

import dev.nepenthe.core.internal.crypto.MasterKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Master key files made ahead of time, for stores that must share one: the replicas of a group,
 * whose copies of each other's keystores are wrapped by it. A store opened alone makes its own on
 * first open instead ({@link StoreOptions#withMasterKeyFile}).
 */
public final class MasterKeyFiles {

    private MasterKeyFiles() {}

    /**
     * Makes a new random master key at {@code file} (owner-only where the file system has POSIX
     * permissions, written beside and renamed into place, durable) unless the file exists or the
     * environment variable {@code NEPENTHE_MASTER_KEY} holds the key.
     *
     * @param file where the key is kept
     * @return whether a key was made now
     * @throws IOException if the file cannot be written
     */
    public static boolean ensure(Path file) throws IOException {
        String env = System.getenv(MasterKey.ENV);
        if ((env != null && !env.isBlank()) || Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        MasterKey.resolve(file, true);
        return true;
    }
}
