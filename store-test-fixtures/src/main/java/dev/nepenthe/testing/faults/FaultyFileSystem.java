package dev.nepenthe.testing.faults;

import java.nio.file.FileStore;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.WatchService;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The default file system with faults: every file operation a store makes on a path of this file
 * system (opening, reading, writing, fsyncing a file or a directory, renaming, deleting, listing)
 * goes through a {@link FaultPlan} first and then to the real file. Lucene's test framework wraps
 * the file system the same way; the store needs no hook of its own, only the discipline of deriving
 * every path from the one it was opened with (ArchitectureTest checks that store code never makes a
 * path of the default file system).
 *
 * <pre>{@code
 * FaultPlan plan = FaultPlan.none(seed);
 * Path data = FaultyFileSystem.wrap(tempDir.resolve("data"), plan);
 * try (Nepenthe store = Nepenthe.open(data)) {
 *     plan.armRandomly(50);                             // faults land where the plan says
 *     ...
 * }
 * plan.heal();
 * }</pre>
 */
public final class FaultyFileSystem extends FileSystem {

    private final FaultyFileSystemProvider provider;
    private final FileSystem real = FileSystems.getDefault();
    private final Path root;

    private FaultyFileSystem(FaultPlan plan, Path root) {
        this.root = root.toAbsolutePath().normalize();
        this.provider = new FaultyFileSystemProvider(this, plan);
    }

    /**
     * {@code file} as a path of a new faulty file system driven by {@code plan}; the plan's records
     * and filter see paths relative to {@code file}'s parent (so a store's data folder and its
     * sibling key folder both have short names).
     */
    public static Path wrap(Path file, FaultPlan plan) {
        Path abs = file.toAbsolutePath().normalize();
        FaultyFileSystem fs =
                new FaultyFileSystem(plan, abs.getParent() == null ? abs : abs.getParent());
        return new FaultyPath(fs, abs);
    }

    /** The real path behind a path of this file system (for a test's own byte scans). */
    public static Path realPath(Path p) {
        return p instanceof FaultyPath f ? f.real : p;
    }

    String relative(Path real) {
        return FaultPlan.relative(root, real);
    }

    @Override
    public FaultyFileSystemProvider provider() {
        return provider;
    }

    @Override
    public void close() {
        // The default file system cannot be closed; nothing of ours needs closing.
    }

    @Override
    public boolean isOpen() {
        return true;
    }

    @Override
    public boolean isReadOnly() {
        return false;
    }

    @Override
    public String getSeparator() {
        return real.getSeparator();
    }

    @Override
    public Iterable<Path> getRootDirectories() {
        List<Path> roots = new ArrayList<>();
        for (Path r : real.getRootDirectories()) {
            roots.add(new FaultyPath(this, r));
        }
        return roots;
    }

    @Override
    public Iterable<FileStore> getFileStores() {
        return real.getFileStores();
    }

    @Override
    public Set<String> supportedFileAttributeViews() {
        return real.supportedFileAttributeViews();
    }

    @Override
    public Path getPath(String first, String... more) {
        return new FaultyPath(this, real.getPath(first, more));
    }

    @Override
    public PathMatcher getPathMatcher(String syntaxAndPattern) {
        PathMatcher m = real.getPathMatcher(syntaxAndPattern);
        return p -> m.matches(FaultyPath.unwrap(p));
    }

    @Override
    public UserPrincipalLookupService getUserPrincipalLookupService() {
        return real.getUserPrincipalLookupService();
    }

    @Override
    public WatchService newWatchService() {
        throw new UnsupportedOperationException("the faulty file system has no watch service");
    }
}
