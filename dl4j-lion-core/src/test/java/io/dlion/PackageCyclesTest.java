package io.dlion;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The packages of core depend on each other without a cycle (read from the imports of the main sources). */
class PackageCyclesTest {
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?(io\\.dlion(?:\\.[a-z]+)*)\\.[A-Z]", Pattern.MULTILINE);

    @Test
    void shouldHaveNoPackageCycleInCore() throws IOException {
        final Map<String, Set<String>> deps = dependencies(Path.of("src/main/java"));
        assertTrue(deps.size() >= 6, "read the packages of core: " + deps.keySet());
        final List<String> cycle = findCycle(deps);
        assertEquals(List.of(), cycle, "package cycle in core");
    }

    @Test
    void shouldFindACycleWhenThereIsOne() {
        final Map<String, Set<String>> deps = new TreeMap<>();
        deps.put("a", Set.of("b"));
        deps.put("b", Set.of("c"));
        deps.put("c", Set.of("a"));
        assertEquals(List.of("a", "b", "c", "a"), findCycle(deps));
    }

    static Map<String, Set<String>> dependencies(final Path root) throws IOException {
        final Map<String, Set<String>> deps = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (final Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                final String pkg = root.relativize(f.getParent()).toString().replace('/', '.');
                final Set<String> out = deps.computeIfAbsent(pkg, k -> new TreeSet<>());
                final Matcher m = IMPORT.matcher(Files.readString(f));
                while (m.find()) {
                    if (!m.group(1).equals(pkg)) {
                        out.add(m.group(1));
                    }
                }
            }
        }
        return deps;
    }

    /** @return one cycle as a path that ends where it starts, or an empty list. */
    static List<String> findCycle(final Map<String, Set<String>> deps) {
        final Set<String> done = new TreeSet<>();
        for (final String start : deps.keySet()) {
            final List<String> path = new ArrayList<>();
            final List<String> cycle = visit(start, deps, path, done);
            if (!cycle.isEmpty()) {
                return cycle;
            }
        }
        return List.of();
    }

    private static List<String> visit(final String pkg, final Map<String, Set<String>> deps, final List<String> path, final Set<String> done) {
        final int at = path.indexOf(pkg);
        if (at >= 0) {
            final List<String> cycle = new ArrayList<>(path.subList(at, path.size()));
            cycle.add(pkg);
            return cycle;
        }
        if (done.contains(pkg)) {
            return List.of();
        }
        path.add(pkg);
        for (final String next : deps.getOrDefault(pkg, Set.of())) {
            final List<String> cycle = visit(next, deps, path, done);
            if (!cycle.isEmpty()) {
                return cycle;
            }
        }
        path.remove(path.size() - 1);
        done.add(pkg);
        return List.of();
    }
}
