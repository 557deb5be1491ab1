package dev.nepenthe.core.internal.io;

import java.io.IOException;
import java.nio.file.CopyOption;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;

/**
 * Copies of the store's own files that never follow a symbolic link. A snapshot or a restore copies
 * what is in a folder; a link planted there (by someone who can write the folder but not read the
 * link's target) must not make the store copy the target into a place they can read.
 */
public final class FileCopies {

    private FileCopies() {}

    /**
     * Copies one regular file. A link (or anything else that is not a regular file) where a data
     * file should be is refused, naming the file; one swapped in after the check is copied as a
     * link, never as its target.
     *
     * @throws IllegalStateException if {@code src} is not a regular file
     */
    public static void copyRegularFile(Path src, Path dst, CopyOption... options)
            throws IOException {
        BasicFileAttributes a =
                Files.readAttributes(src, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!a.isRegularFile()) {
            throw new IllegalStateException(
                    src
                            + " is "
                            + (a.isSymbolicLink() ? "a symbolic link" : "not a regular file")
                            + "; expected a regular file (a link is never copied as what it points"
                            + " to)");
        }
        CopyOption[] all = Arrays.copyOf(options, options.length + 1);
        all[options.length] = LinkOption.NOFOLLOW_LINKS;
        Files.copy(src, dst, all);
    }
}
