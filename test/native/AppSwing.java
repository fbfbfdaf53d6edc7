// A small Java Swing app for the native route's tests: the no-accessibility-tree family beside Tk (no ATK
// bridge is installed, so Swing reaches no AT-SPI bus). A text field and a button; it reports its own state
// as one JSON line on stdout on every change (the field's text, the click count, which widget has focus),
// the same shape as app_tk.py, so tests assert what the app itself holds.
//   java test/native/AppSwing.java TITLE   (the JDK's source launcher: no build step)
import java.awt.Component;
import java.awt.KeyboardFocusManager;
import javax.swing.JButton;
import javax.swing.JFrame;
import javax.swing.JTextField;
import javax.swing.SwingUtilities;
import javax.swing.event.DocumentEvent;
import javax.swing.event.DocumentListener;

public class AppSwing {
  private static JTextField field;
  private static int clicks = 0;
  private static String last = null;

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  /** Prints the state when it differs from the last line printed (on the event thread). */
  private static void changed() {
    Component focus = KeyboardFocusManager.getCurrentKeyboardFocusManager().getFocusOwner();
    String focusName = focus == null ? "null" : quote(focus.getClass().getSimpleName());
    String s = "{\"entry\": " + quote(field.getText()) + ", \"clicks\": " + clicks + ", \"focus\": " + focusName + "}";
    if (!s.equals(last)) {
      last = s;
      System.out.println(s);
      System.out.flush();
    }
  }

  public static void main(String[] args) {
    String title = args.length > 0 ? args[0] : "Verity Swing app";
    SwingUtilities.invokeLater(() -> {
      JFrame frame = new JFrame(title);
      frame.setDefaultCloseOperation(JFrame.EXIT_ON_CLOSE);
      frame.setLayout(null); // placed as app_tk.py places its widgets, so the cases aim at the same points
      field = new JTextField(30);
      field.setBounds(8, 8, 400, 26);
      JButton button = new JButton("Press me");
      button.setBounds(150, 50, 120, 30);
      button.addActionListener(e -> {
        clicks++;
        changed();
      });
      field.getDocument().addDocumentListener(new DocumentListener() {
        public void insertUpdate(DocumentEvent e) { changed(); }
        public void removeUpdate(DocumentEvent e) { changed(); }
        public void changedUpdate(DocumentEvent e) { changed(); }
      });
      KeyboardFocusManager.getCurrentKeyboardFocusManager()
          .addPropertyChangeListener("focusOwner", e -> changed());
      frame.add(field);
      frame.add(button);
      frame.setBounds(40, 40, 420, 160);
      frame.setVisible(true);
      // The button, not the field, takes the focus when the window is activated (as in app_tk.py, where
      // nothing is focused until clicked): the cases check that a refused call did not click the field.
      button.requestFocusInWindow();
      changed();
    });
  }
}
