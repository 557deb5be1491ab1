package dev.nepenthe.testing.faults;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.ProviderMismatchException;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;

/** A path of a {@link FaultyFileSystem}: a real path of the default file system, wrapped. */
final class FaultyPath implements Path {

    private final FaultyFileSystem fs;
    final Path real;

    FaultyPath(FaultyFileSystem fs, Path real) {
        this.fs = fs;
        this.real = real;
    }

    private Path wrap(Path p) {
        return p == null ? null : new FaultyPath(fs, p);
    }

    static Path unwrap(Path p) {
        if (p instanceof FaultyPath f) {
            return f.real;
        }
        throw new ProviderMismatchException(
                "expected a path of the faulty file system, got " + p.getClass());
    }

    @Override
    public FaultyFileSystem getFileSystem() {
        return fs;
    }

    @Override
    public boolean isAbsolute() {
        return real.isAbsolute();
    }

    @Override
    public Path getRoot() {
        return wrap(real.getRoot());
    }

    @Override
    public Path getFileName() {
        return wrap(real.getFileName());
    }

    @Override
    public Path getParent() {
        return wrap(real.getParent());
    }

    @Override
    public int getNameCount() {
        return real.getNameCount();
    }

    @Override
    public Path getName(int index) {
        return wrap(real.getName(index));
    }

    @Override
    public Path subpath(int beginIndex, int endIndex) {
        return wrap(real.subpath(beginIndex, endIndex));
    }

    @Override
    public boolean startsWith(Path other) {
        return other instanceof FaultyPath f && real.startsWith(f.real);
    }

    @Override
    public boolean endsWith(Path other) {
        return other instanceof FaultyPath f && real.endsWith(f.real);
    }

    @Override
    public Path normalize() {
        return wrap(real.normalize());
    }

    @Override
    public Path resolve(Path other) {
        return wrap(real.resolve(unwrap(other)));
    }

    @Override
    public Path relativize(Path other) {
        return wrap(real.relativize(unwrap(other)));
    }

    @Override
    public URI toUri() {
        return real.toUri();
    }

    @Override
    public Path toAbsolutePath() {
        return wrap(real.toAbsolutePath());
    }

    @Override
    public Path toRealPath(LinkOption... options) throws IOException {
        return wrap(real.toRealPath(options));
    }

    /**
     * The real file: code that needs a {@link File} (a library that takes no {@link Path}) reaches
     * the disk past the faults, which the tests accept for derived files only.
     */
    @Override
    public File toFile() {
        return real.toFile();
    }

    @Override
    public WatchKey register(
            WatchService watcher, WatchEvent.Kind<?>[] events, WatchEvent.Modifier... modifiers) {
        throw new UnsupportedOperationException("the faulty file system has no watch service");
    }

    @Override
    public int compareTo(Path other) {
        return real.compareTo(unwrap(other));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FaultyPath f && f.fs == fs && f.real.equals(real);
    }

    @Override
    public int hashCode() {
        return real.hashCode();
    }

    @Override
    public String toString() {
        return real.toString();
    }
}
