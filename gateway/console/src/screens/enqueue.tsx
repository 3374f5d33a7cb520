export function EnqueueButton() {
  return null;
}
