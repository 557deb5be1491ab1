package dev.nepenthe.testing.faults;

import dev.nepenthe.testing.faults.FaultPlan.Op;
import java.io.IOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AccessMode;
import java.nio.file.CopyOption;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.FileAttributeView;
import java.nio.file.spi.FileSystemProvider;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * The provider of a {@link FaultyFileSystem}: each operation asks the plan, then the real provider.
 */
final class FaultyFileSystemProvider extends FileSystemProvider {

    private final FaultyFileSystem fs;
    private final FaultPlan plan;
    private final FileSystemProvider real = FileSystems.getDefault().provider();

    FaultyFileSystemProvider(FaultyFileSystem fs, FaultPlan plan) {
        this.fs = fs;
        this.plan = plan;
    }

    private String name(Path p) {
        return fs.relative(FaultyPath.unwrap(p));
    }

    @Override
    public String getScheme() {
        return "faulty";
    }

    @Override
    public FileSystem newFileSystem(URI uri, Map<String, ?> env) {
        throw new UnsupportedOperationException("made by FaultyFileSystem.wrap");
    }

    @Override
    public FileSystem getFileSystem(URI uri) {
        throw new UnsupportedOperationException("made by FaultyFileSystem.wrap");
    }

    @Override
    public Path getPath(URI uri) {
        throw new UnsupportedOperationException("made by FaultyFileSystem.wrap");
    }

    @Override
    public FileChannel newFileChannel(
            Path path, Set<? extends OpenOption> options, FileAttribute<?>... attrs)
            throws IOException {
        Path p = FaultyPath.unwrap(path);
        boolean creates =
                options.contains(StandardOpenOption.CREATE_NEW)
                        || (options.contains(StandardOpenOption.CREATE) && !Files.exists(p));
        if (creates) {
            plan.checkCreate(name(path), p);
        }
        FileChannel ch = real.newFileChannel(p, options, attrs);
        return new FaultyFileChannel(ch, plan, name(path), Files.isDirectory(p));
    }

    @Override
    public SeekableByteChannel newByteChannel(
            Path path, Set<? extends OpenOption> options, FileAttribute<?>... attrs)
            throws IOException {
        return newFileChannel(path, options, attrs);
    }

    @Override
    public DirectoryStream<Path> newDirectoryStream(
            Path dir, DirectoryStream.Filter<? super Path> filter) throws IOException {
        DirectoryStream<Path> in =
                real.newDirectoryStream(
                        FaultyPath.unwrap(dir), p -> filter.accept(new FaultyPath(fs, p)));
        return new DirectoryStream<>() {
            @Override
            public Iterator<Path> iterator() {
                Iterator<Path> it = in.iterator();
                return new Iterator<>() {
                    @Override
                    public boolean hasNext() {
                        return it.hasNext();
                    }

                    @Override
                    public Path next() {
                        return new FaultyPath(fs, it.next());
                    }
                };
            }

            @Override
            public void close() throws IOException {
                in.close();
            }
        };
    }

    @Override
    public void createDirectory(Path dir, FileAttribute<?>... attrs) throws IOException {
        plan.checkCreate(name(dir), FaultyPath.unwrap(dir));
        real.createDirectory(FaultyPath.unwrap(dir), attrs);
    }

    @Override
    public void delete(Path path) throws IOException {
        plan.check(Op.DELETE, name(path), FaultyPath.unwrap(path));
        real.delete(FaultyPath.unwrap(path));
    }

    @Override
    public void copy(Path source, Path target, CopyOption... options) throws IOException {
        Path from = FaultyPath.unwrap(source);
        plan.check(Op.READ, name(source), from);
        plan.checkCreate(name(target), FaultyPath.unwrap(target));
        long size = Files.isRegularFile(from) ? Files.size(from) : 0;
        for (long left = size; left > 0; ) {
            int want = (int) Math.min(left, 1 << 20);
            int n = plan.allowWrite(name(target), want);
            left -= n;
        }
        real.copy(from, FaultyPath.unwrap(target), options);
    }

    @Override
    public void move(Path source, Path target, CopyOption... options) throws IOException {
        plan.check(Op.RENAME, name(target), FaultyPath.unwrap(source));
        real.move(FaultyPath.unwrap(source), FaultyPath.unwrap(target), options);
    }

    @Override
    public boolean isSameFile(Path path, Path path2) throws IOException {
        return real.isSameFile(FaultyPath.unwrap(path), FaultyPath.unwrap(path2));
    }

    @Override
    public boolean isHidden(Path path) throws IOException {
        return real.isHidden(FaultyPath.unwrap(path));
    }

    @Override
    public FileStore getFileStore(Path path) throws IOException {
        return real.getFileStore(FaultyPath.unwrap(path));
    }

    @Override
    public void checkAccess(Path path, AccessMode... modes) throws IOException {
        real.checkAccess(FaultyPath.unwrap(path), modes);
    }

    @Override
    public <V extends FileAttributeView> V getFileAttributeView(
            Path path, Class<V> type, LinkOption... options) {
        return real.getFileAttributeView(FaultyPath.unwrap(path), type, options);
    }

    @Override
    public <A extends BasicFileAttributes> A readAttributes(
            Path path, Class<A> type, LinkOption... options) throws IOException {
        return real.readAttributes(FaultyPath.unwrap(path), type, options);
    }

    @Override
    public Map<String, Object> readAttributes(Path path, String attributes, LinkOption... options)
            throws IOException {
        return real.readAttributes(FaultyPath.unwrap(path), attributes, options);
    }

    @Override
    public void setAttribute(Path path, String attribute, Object value, LinkOption... options)
            throws IOException {
        real.setAttribute(FaultyPath.unwrap(path), attribute, value, options);
    }

    @Override
    public void createSymbolicLink(Path link, Path target, FileAttribute<?>... attrs)
            throws IOException {
        real.createSymbolicLink(
                FaultyPath.unwrap(link),
                target instanceof FaultyPath ? FaultyPath.unwrap(target) : target,
                attrs);
    }

    @Override
    public Path readSymbolicLink(Path link) throws IOException {
        return new FaultyPath(fs, real.readSymbolicLink(FaultyPath.unwrap(link)));
    }
}
