export function App() {
  return (
    <main>
      <h1>Appliance console</h1>
    </main>
  );
}
